"""Tests of config.py."""

import unittest

import config


class ConfigTest(unittest.TestCase):
    def test_value(self):
        # The demo's task, "change value to 2", makes this test pass.
        self.assertEqual(config.value, 2)

    def test_retries_is_positive(self):
        self.assertGreater(config.retries, 0)


if __name__ == "__main__":
    unittest.main()

"""Tests of greeter.py: they pass whatever the value is."""

import unittest

import config
import greeter


class GreeterTest(unittest.TestCase):
    def test_scaled_uses_value(self):
        self.assertEqual(greeter.scaled(3), 3 * config.value)

    def test_greeting_names_the_app(self):
        self.assertIn(config.name, greeter.greeting())


if __name__ == "__main__":
    unittest.main()

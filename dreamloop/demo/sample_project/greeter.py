"""The greeter app: prints a greeting built from config.py."""

import config


def scaled(x: int) -> int:
    """``x`` times the configured value."""
    return x * config.value


def greeting() -> str:
    """One line naming the app and its value."""
    return f"Hello from {config.name} (value={config.value}, retries={config.retries})"


if __name__ == "__main__":
    print(greeting())

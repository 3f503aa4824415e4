"""Settings of the greeter app."""

value = 1
name = "greeter"
retries = 3

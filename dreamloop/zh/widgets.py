"""Chinese for the widgets' fixed labels and the loop's flowchart (``dreamloop/widgets/``, ``dreamloop/diagram.py``)."""

TEXTS = {
}

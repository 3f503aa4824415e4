"""Chapter 08b in the page: the fallback named in the live view, what its tombstones withdrew struck through.

What the page must show is asked of the kernel (``ch08``'s probe: each LiveView's run, its fallback, its
tombstones and what they withdrew), not hard-coded. Saves ``fallback-live-view.png``.
"""

from __future__ import annotations

from chapters.ch08 import ask_kernel, check_live_views
from lab import Chapter

SCREENSHOTS = ("fallback-live-view.png",)


def check(ch: Chapter) -> None:
    check_live_views(ch, ask_kernel(ch), "the fallback model's", "fallback-live-view.png")

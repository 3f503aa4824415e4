"""Chapter 00 in the page: the tour's Stop, pressed by a person, and a second run that is the same run.

The tour cell is re-run as a person would (``DREAMLOOP_AUTO_ANSWER`` unset in the kernel, so the run is
paced); Stop is clicked while the text streams and the click → Terminal latency is measured. Then the cell
runs again: a fresh workspace, so the same six turns and the same change.
"""

from __future__ import annotations

from lab import Chapter, cell_idle, cell_index, fail, press_stop, run_cell, shoot, wait_until

SCREENSHOTS = ("ch00-stopped.png",)
TOUR = "terminal = await live.watch(run)"


def check(ch: Chapter) -> None:
    page, report, budget = ch.page, ch.report, ch.budget
    press_stop(ch, TOUR, when="streaming", expect="aborted_streaming",
               check="Stop while the model streams (a person watching)")
    index = cell_index(ch, TOUR)
    live = page.locator(f".jp-Notebook .jp-Cell >> nth={index}").locator(".dreamloop-live")
    shoot(page, live.element_handle(timeout=budget.ms(5)), ch.out / "ch00-stopped.png", budget)

    with report.check("a second run is the same run (fresh workspace)"):
        run_cell(ch, index)
        if not wait_until(lambda: cell_idle(ch, index), 30, budget, step=0.2):
            fail("a second run is the same run (fresh workspace)", "the tour cell did not finish")
        said = ch.execute("print(terminal.reason, terminal.turn_count, '|', "
                          "workspace_diff(sample_project_path(), workspace, ['config.py']).count('+value = 2'))")
        if said["out"].strip() != "completed 6 | 1" or said["err"]:
            fail("a second run is the same run (fresh workspace)",
                 f"after Stop, running the cell again gave {said['out'].strip()!r} {said['err'][-300:]!r}; "
                 "expected 'completed 6 | 1' (six turns, value 1 → 2, as the first run)")
        report.note("completed at turn_count=6, value 1 → 2 again")

"""The turn timeline: one row per turn with its status icon and pass counts, plus a row
for the turn in flight. Highlighting a row selects that turn; Enter loads its program."""

from __future__ import annotations

from textual.widgets import OptionList
from textual.widgets.option_list import Option

from assistant.problems.schema import Problem
from assistant.store.trajectory import Turn
from assistant.tui.views import pending_label, turn_label


class TurnTimeline(OptionList):
    """Lists the turns of the open session."""

    def on_mount(self) -> None:
        self.border_title = "Turns"

    def show(
        self,
        turns: list[Turn],
        problem: Problem | None,
        pending: tuple[int, str, str] | None,
        select: int | None = None,
    ) -> None:
        """Redraw every row; highlight turn `select` (default: the row highlighted before, or the
        newest when a turn is in flight)."""
        public = len(problem.public_tests) if problem else 0
        hidden = len(problem.hidden_tests) if problem else 0
        options = [Option(turn_label(t, public, hidden), id=f"turn-{t.index}") for t in turns]
        if pending is not None:
            options.append(Option(pending_label(*pending), id="pending"))
        keep = self.highlighted
        passed = sum(t.passed_public for t in turns)
        self.border_title = f"Turns · {len(turns)}" + (f" · {passed} passed" if passed else "") if turns else "Turns"
        # Redrawing is not choosing: no OptionHighlighted, so the panes keep what the app put there.
        with self.prevent(OptionList.OptionHighlighted):
            self.set_options(options)
            if options:
                target = select if select is not None else (len(options) - 1 if keep is None or pending else keep)
                self.highlighted = min(max(target, 0), len(options) - 1)

    def selected_turn(self) -> int | None:
        """The index of the highlighted turn (None for the in-flight row or no row)."""
        if self.highlighted is None:
            return None
        option = self.get_option_at_index(self.highlighted)
        if option.id and option.id.startswith("turn-"):
            return int(option.id.split("-", 1)[1])
        return None

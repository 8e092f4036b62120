"""The pass interface every optimization method implements."""

from __future__ import annotations

from dataclasses import dataclass

from cudaify.core import Problem, Variant
from cudaify.frontend.facts import Program


@dataclass(frozen=True)
class Context:
    """What a method may read besides the variant: the analysed input program."""

    program: Program


@dataclass(frozen=True)
class Outcome:
    """The result of trying a rule: a new variant, or the one-line reason it did not apply."""

    variant: Variant | None
    reason: str = ""


class Method:
    """An optimization method: a node of the reasoning graph and a pass of the compiler."""

    name: str = ""
    summary: str = ""
    category: str = ""
    instruction: str = ""  # what the SLM is told to do when it applies this method
    # The graph nodes this method may follow (its in-edges in the reasoning graph's skeleton);
    # "sequential" is the unmodified program. Trajectories add examples and statistics.
    follows: tuple[str, ...] = ()
    # Out-edges the method declares itself, for a method no other names in `follows`: one
    # that changes no mapping (fp_exact) leads on to what a kernel-making method leads to.
    leads_to: tuple[str, ...] = ()
    # Methods this one does the work of, and more (schedule maps what offload maps and
    # also chooses the loop order): until the graph holds statistics of its own edge, the
    # search ranks it by theirs, just ahead, so a short time budget tries it first.
    supersedes: tuple[str, ...] = ()

    def applies(self, variant: Variant, ctx: Context) -> str | None:
        """None when the method can be applied, else the reason it cannot."""
        raise NotImplementedError

    def apply_rule(self, variant: Variant, ctx: Context) -> Outcome:
        """Apply the deterministic implementation."""
        raise NotImplementedError

    def rule(self, variant: Variant, ctx: Context) -> Outcome:
        """The rule's child of `variant`, or why there is none: its precondition's reason
        where it does not apply, else what `apply_rule` makes."""
        reason = self.applies(variant, ctx)
        return Outcome(None, reason) if reason is not None else self.apply_rule(variant, ctx)

    def check(self, before: Variant, after: Variant, ctx: Context) -> list[Problem]:
        """The method's own structural postcondition."""
        return []

    def describe(self) -> dict[str, str]:
        return {"name": self.name, "description": self.summary, "category": self.category}

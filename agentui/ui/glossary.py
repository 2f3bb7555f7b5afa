"""The words a newcomer meets on the main screen, in one place: the help screen's glossary, the
pipeline line's tooltips and the first-run hint all read from here (v0.8 §R7 for the loss terms)."""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "D": "distance to done: the weighted share of success criteria not yet met (0 = all met). "
         "At or below δ the task succeeds (v0.8 §R7).",
    "P": "process failure: of the failed criteria, the share that failed for logical reasons "
         "(a wrong plan) rather than environmental ones (a missing file, no network).",
    "∇L": "gradient of the loss between two rounds: negative = getting better, "
          "near zero = a plateau, positive = getting worse. The arrow after the directive says the same: "
          "↓ better, → plateau, ↑ worse, ⊥ first round (nothing to compare with yet). Every round is "
          "scored, a round whose plan could not be parsed included.",
    "Ω": "resources used: the share of the replan and time budgets already spent. At θ the task is abandoned.",
    "L": "the loss GGS minimises: L = α·D + β·P + λ·Ω (β fades as Ω grows). The sparkline shows L per round.",
    "directive": "what GGS (the Goal Gradient Solver) decides after each round: refine, change_path, "
                 "change_approach, break_symmetry (replan) or accept, success, abandon (stop). "
                 "Shown as previous→current (init before the first decision).",
    "M/K/C/T": "the memory's four layers (v0.8 §6a): M = Megrams, raw facts from past tasks (they fade); "
               "K = knowledge cached for a task; C = common sense, rules distilled or remembered (timeless); "
               "T = thinking, the system's values (timeless).",
    "R1…R7": "the roles: R1 Perceiver reads your goal, R2 Planner splits it into subtasks, R3 Executor runs "
             "tools, R4a Validator checks each criterion, R4b Meta-Validator merges, R7 GGS steers, "
             "R5 memory, R6 Auditor.",
}

FIRST_RUN_HINT = (
    "[b]New here?[/b] Type a goal below (e.g. [i]how many Python files are in this folder?[/i]) and press Enter. "
    "The bus shows the roles talking; the line under it shows GGS's loss after each round — "
    "[b]D[/b] distance to done, [b]P[/b] logical vs environmental failures, [b]∇L[/b] better (−) or worse (+), "
    "[b]Ω[/b] budget used. Hover a field or press [b]F1[/b] for the glossary."
)


def tooltip(term: str) -> str:
    return f"{term} — {GLOSSARY[term]}"

"""A member a class lacks is asked of its bases in other indexed packages (trl's trainers of transformers' Trainer,
compat/timeline/drift.py `_inherited`), on the shipped index: the base's answer where a release of it has the member,
else Unknown with why (the index reads no attribute set outside __init__)."""

from __future__ import annotations

from compat.timeline.drift import answer
from compat.timeline.links import ApiSource
from compat.timeline.records import ApiQuestion, Drift, Missing


def _ask(cls: str, name: str, stated: dict[str, str]):
    q = ApiQuestion(missing=Missing.MEMBER, name=name, module=cls, caller="trl")
    return answer(q, None, ApiSource(), stated)


def test_a_member_the_base_in_another_package_dropped_is_answered_there():
    # transformers 5.0 removed Trainer.tokenizer (processing_class replaced it); trl's GRPOTrainer inherits it.
    a = _ask("GRPOTrainer", "tokenizer", {"transformers": "5.0.0"})
    assert a is not None and a.key == "transformers:Trainer.tokenizer" and a.caller == "trl"
    assert a.drift is Drift.CALLEE_TOO_NEW and a.fix == ("transformers<5.0.0",)


def test_the_reported_base_release_that_has_it_decides_nothing():
    a = _ask("GRPOTrainer", "tokenizer", {"transformers": "4.46.0"})
    assert a is not None and a.key == "transformers:Trainer.tokenizer" and a.drift is Drift.INSTALLED_HAS


def test_a_member_no_release_of_the_base_has_stays_unknown():
    # An attribute a Trainer sets in its training loop, not in __init__, is not in the index: it cannot tell, and says
    # so rather than "never existed".
    a = _ask("GRPOTrainer", "set_in_the_training_loop", {})
    assert a is not None and a.drift is Drift.UNDECIDED and not a.decided
    assert a.reason is not None and "Trainer (transformers)" in a.reason and "set elsewhere is not read" in a.reason


def test_a_member_of_the_class_itself_is_not_asked_of_its_base():
    a = _ask("GRPOTrainer", "model_accepts_loss_kwargs", {})
    assert a is not None and a.key == "trl:GRPOTrainer.model_accepts_loss_kwargs"


def test_a_base_named_bare_is_asked_only_of_a_package_the_class_imports_it_from():
    # transformers' Adafactor subclasses torch.optim.Optimizer, written `Optimizer`; deepspeed exports a class of that
    # name at its root, which was asked and named as the base ("inherits from Optimizer (deepspeed)").
    q = ApiQuestion(missing=Missing.MEMBER, name="param_groups", module="Adafactor", caller="transformers")
    a = answer(q, None, ApiSource(), {})
    assert a is not None and a.package == "transformers" and "deepspeed" not in (a.reason or "")

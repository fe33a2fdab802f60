"""What the fine-tuning panel says and does when its settings change: each
optimizer gets a learning rate it works with, a setting changed mid-run says that the run ends,
a run that will start from zero shows the zero head's loss before its first step, and Play is
told when the run has converged. Expected numbers are computed here, never by pycore."""
import math

import numpy as np

from pycore.explorer.session import Session


def means_session():
    s = Session()
    assert s.handle({"op": "preset", "name": "finetune", "seed": 0})["ok"]
    return s


def test_each_optimizer_brings_its_own_learning_rate_and_says_so():
    s = means_session()
    assert s.handle({"op": "train_set", "name": "lr", "value": "0.5"})["ok"]
    answer = s.handle({"op": "train_set", "name": "optimizer", "value": "adam"})
    section = answer["finetune"]
    assert section["settings"]["lr"] == 0.01 and section["settings"]["optimizer"] == "adam"
    assert "Adam, with its usual learning rate 0.01 (it was 0.5" in section["status"]
    assert s.handle({"op": "train_set", "name": "optimizer", "value": "momentum"})[
        "finetune"]["settings"]["lr"] == 0.02
    # the same optimizer again changes nothing, and says nothing
    again = s.handle({"op": "train_set", "name": "optimizer", "value": "momentum"})["finetune"]
    assert again["settings"]["lr"] == 0.02 and "usual" not in again["status"]


def test_a_setting_changed_during_a_run_says_the_run_ends_and_the_next_step_starts_anew():
    s = means_session()
    first = s.handle({"op": "train", "n": 5})["finetune"]["run"]
    assert first["steps"] == 5
    said = s.handle({"op": "train_set", "name": "optimizer", "value": "adam"})["finetune"]
    assert said["run"] is None
    assert "The run of 5 steps ended when the setting changed: the next step starts" in said["status"]
    after = s.handle({"op": "train", "n": 1})["finetune"]
    assert after["run"]["id"] != first["id"] and after["run"]["steps"] == 1
    assert "ended when the setting changed; this is a new run" in after["status"]  # while news
    s.handle({"op": "train_reset"})
    later = s.handle({"op": "train", "n": 1})["finetune"]  # another run: old news
    assert "setting changed" not in later["status"] and "usual" not in later["status"]


def test_start_from_zero_shows_the_zero_heads_loss_before_the_first_step():
    s = means_session()
    assert s.handle({"op": "train_set", "name": "start", "value": "current"})["ok"]
    s.handle({"op": "train", "n": 3})   # a W_head that is not zero
    s.handle({"op": "train_reset"})
    answer = s.handle({"op": "train_set", "name": "start", "value": "zero"})["finetune"]
    labels = np.array(answer["labels"])
    C = answer["classes"]
    # at W_head = 0 every logit is 0: the loss is log C, and every sample is read as class 0
    assert math.isclose(answer["loss"], math.log(C), rel_tol=1e-12)
    assert answer["accuracy"] == np.mean(labels == 0)
    assert "from W_head = 0" in answer["status"] and "loss %.4f" % math.log(C) in answer["status"]
    step = s.handle({"op": "train", "n": 1})["finetune"]["run"]
    assert math.isclose(step["loss"][0], math.log(C), rel_tol=1e-12)  # what the status said


def test_a_converged_run_says_so():
    s = means_session()
    said = None
    for _ in range(60):
        section = s.handle({"op": "train", "n": 10})["finetune"]
        if section["run"]["converged"]:
            said = section
            break
    assert said is not None, "never converged in 600 steps"
    loss, accuracy = said["run"]["loss"], said["run"]["accuracy"]
    assert accuracy[-1] == 1.0 and loss[-21] - loss[-1] < 0.01 * loss[0]
    assert said["run"]["converged"] in said["status"] and "Play stopped" in said["status"]
    assert said["run"]["steps"] < 200

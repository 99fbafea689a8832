"""``--out DIR`` never clobbers: files rac-fw did not write, and generated files edited since, are refused
(listed) unless ``--force``; nothing of the user's is deleted; user code in user.c/user.h survives."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from rac_fw.domains.firmware import usercode
from rac_fw.domains.firmware.lower import MANIFEST_NAME, ArtifactConflict, Lowered, write_artifact

REPO = Path(__file__).resolve().parent.parent
PLAN = REPO / "examples" / "uart_hello.yaml"


def plan(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "rac_fw.cli", "plan", str(PLAN), "-t", "stm32f407", "-f",
                           "zephyr", "--out", str(out), "--json", *extra],
                          capture_output=True, text=True, timeout=120)


def test_user_files_in_the_out_dir_are_refused_and_untouched(tmp_path):
    out = tmp_path / "app"
    (out / "src").mkdir(parents=True)
    (out / "README.md").write_text("my notes\n")
    (out / "src" / "main.c").write_text("int main(void) { return 42; }\n")
    run = plan(out)
    assert run.returncode == 2, run.stdout + run.stderr
    ev = json.loads(run.stdout)["evidence"][0]
    assert ev["code"] == "E_OUTPUT_CONFLICT" and {"README.md", "src/main.c"} <= set(ev["objects"])
    assert (out / "README.md").read_text() == "my notes\n"
    assert (out / "src" / "main.c").read_text() == "int main(void) { return 42; }\n"
    assert not (out / MANIFEST_NAME).exists() and not (out / "prj.conf").exists()  # nothing was written


def test_edited_generated_file_needs_force_and_user_code_survives(tmp_path):
    out = tmp_path / "app"
    assert plan(out).returncode == 0
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    assert manifest["user_files"] == ["src/user.c", "src/user.h"]
    assert "src/user.c" not in {f["path"] for f in manifest["files"]}
    user_code = '#include "user.h"\n\nvoid rac_user_init(void)\n{\n\t/* mine */\n}\n'
    (out / "src" / "user.c").write_text(user_code)
    assert plan(out).returncode == 0  # unedited regeneration: fine, user code kept
    assert (out / "src" / "user.c").read_text() == user_code
    main = out / "src" / "main.c"
    generated = main.read_text()
    main.write_text(generated + "/* my edit */\n")
    run = plan(out)
    assert run.returncode == 2
    ev = json.loads(run.stdout)["evidence"][0]
    assert ev["code"] == "E_OUTPUT_CONFLICT" and ev["objects"] == ["src/main.c"] and "--force" in str(ev)
    assert main.read_text().endswith("/* my edit */\n")
    assert plan(out, "--force").returncode == 0
    assert main.read_text() == generated and (out / "src" / "user.c").read_text() == user_code


def tree(files: dict[str, str]) -> Lowered:
    return Lowered(framework="zephyr", target="t", files=files, user_files=usercode.placement("src"))


def test_only_unedited_generated_files_are_removed(tmp_path):
    write_artifact(tree({"src/main.c": "a", "boards/a.overlay": "x", "boards/b.overlay": "y"}), tmp_path)
    (tmp_path / "notes.txt").write_text("mine")
    (tmp_path / "boards" / "b.overlay").write_text("y edited")
    manifest = write_artifact(tree({"src/main.c": "a"}), tmp_path)
    assert not (tmp_path / "boards" / "a.overlay").exists()  # stale and unedited: removed
    assert (tmp_path / "boards" / "b.overlay").read_text() == "y edited"  # edited: kept
    assert (tmp_path / "notes.txt").read_text() == "mine"  # never ours: kept
    assert [f["path"] for f in manifest["files"]] == ["src/main.c"]
    assert (tmp_path / "src" / "user.c").is_file()


def test_forged_manifest_cannot_authorise_overwrite_or_deletion_outside(tmp_path):
    out = tmp_path / "app"
    write_artifact(tree({"src/main.c": "a"}), out)
    outside = tmp_path / "victim.txt"
    outside.write_text("keep")
    (out / "README.md").write_text("mine")
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"] += [{"path": "../victim.txt", "sha256": "0" * 64}, {"path": "README.md", "sha256": "1" * 64}]
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(ArtifactConflict) as err:
        write_artifact(tree({"src/main.c": "b", "README.md": "generated"}), out)
    assert err.value.evidence[0].objects == ["README.md"]
    assert outside.read_text() == "keep" and (out / "README.md").read_text() == "mine"


def test_writes_never_follow_symlinks_out_of_the_out_dir(tmp_path):
    """Issue 27: a symlinked src/ or a dangling user.c link made --out write elsewhere. Each is refused
    (E_OUTPUT_SYMLINK naming the link and its target); nothing is written, in --out or outside it."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.c").write_text("/* mine */\n")
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "src").symlink_to(elsewhere)
    run = plan(linked)
    assert run.returncode == 2, run.stdout + run.stderr
    ev = json.loads(run.stdout)["evidence"][0]
    assert ev["code"] == "E_OUTPUT_SYMLINK" and ev["objects"] == ["src"] and str(elsewhere) in ev["message"]
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.c"] and not (linked / MANIFEST_NAME).exists()

    out = tmp_path / "app"
    assert plan(out).returncode == 0
    victim = tmp_path / "victim.c"
    (out / "src" / "user.c").unlink()
    (out / "src" / "user.c").symlink_to(victim)  # dangling: creating user.c would create victim.c
    outside = tmp_path / "outside.json"
    outside.write_text("{}\n")
    run = plan(out)
    ev = json.loads(run.stdout)["evidence"][0]
    assert run.returncode == 2 and ev["code"] == "E_OUTPUT_SYMLINK" and ev["objects"] == ["src/user.c"], ev
    assert not victim.exists()
    (out / "src" / "user.c").unlink()
    (out / MANIFEST_NAME).unlink()
    (out / MANIFEST_NAME).symlink_to(outside)
    run = plan(out, "--force")
    assert json.loads(run.stdout)["evidence"][0]["objects"] == [MANIFEST_NAME] and outside.read_text() == "{}\n"


def test_a_user_file_linked_from_elsewhere_is_kept(tmp_path):
    """Linking your own user.c from another place is fine: rac-fw never writes an existing user file."""
    mine = tmp_path / "mine.c"
    mine.write_text('#include "user.h"\nvoid rac_user_init(void) {}\n')
    out = tmp_path / "app"
    (out / "src").mkdir(parents=True)
    (out / "src" / "user.c").symlink_to(mine)
    run = plan(out)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (out / "src" / "user.c").is_symlink() and mine.read_text().startswith('#include "user.h"')

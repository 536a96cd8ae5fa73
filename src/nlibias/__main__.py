"""``python -m nlibias``: the ``nlibias`` command (for environments where its script is not on PATH).

>>> import subprocess, sys
>>> subprocess.run([sys.executable, "-m", "nlibias", "--version"], capture_output=True, text=True).stdout.startswith("nlibias ")
True
"""

from nlibias.cli.main import app

if __name__ == "__main__":
    app(prog_name="nlibias")

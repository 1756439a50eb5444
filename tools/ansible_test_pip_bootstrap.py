"""Stands in for the pip bootstrap script that ansible-test downloads into each test virtualenv.

ansible-test fetches that script from a host this lab cannot reach, and reads it from its cache
(~/.ansible/test/cache/get_pip_<version>.py) when present. This one installs the pip bundled with
Python (ensurepip), then lets that pip install the requested packages from the package index.
It takes the same command line: pip install options and requirement specifiers.
"""

import subprocess
import sys

# Options that only the original bootstrap script understands; pip itself rejects them.
BOOTSTRAP_ONLY_OPTIONS = {'--no-setuptools', '--no-wheel'}


def main():
    """Install pip into the running interpreter's environment, then the requested packages."""
    # In a child process: ensurepip points PIP_CONFIG_FILE at /dev/null in its own environment, which
    # would hide the machine's pip settings (index, certificates) from the install that follows.
    subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade'])
    pip_arguments = [argument for argument in sys.argv[1:] if argument not in BOOTSTRAP_ONLY_OPTIONS]
    if pip_arguments:
        sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install'] + pip_arguments))


if __name__ == '__main__':
    main()

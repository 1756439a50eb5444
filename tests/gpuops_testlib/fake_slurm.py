# -*- coding: utf-8 -*-
# Copyright: gpuops maintainers
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Stand-ins for sbatch, squeue, sacct, scontrol, scancel, sinfo and srun, first on PATH: sbatch runs the script at
once, writing its output where its #SBATCH lines say, and srun runs the program it is given. The slurm_launcher and
scaling sweep tests run their playbooks against them; the real Slurm runs are the integration tier's."""

from gpuops_testlib.role_cases import write_fake_tool

# Each stand-in keeps its argv in $FAKE_SLURM/calls; sbatch numbers the jobs from 4242 and keeps each job's end in
# $FAKE_SLURM/<id>.json, which sacct and scontrol report; squeue prints $FAKE_SLURM/queue when there is one.
COMMON = """
    import json, os, re, subprocess, sys
    state = os.environ["FAKE_SLURM"]
    with open(os.path.join(state, "calls"), "a") as calls:
        calls.write(json.dumps([os.path.basename(sys.argv[0])] + sys.argv[1:]) + "\\n")

    def job(job_id):
        path = os.path.join(state, job_id + ".json")
        return json.load(open(path)) if os.path.exists(path) else None
"""
FAKES = {
    "sbatch": COMMON + """
    text = open(sys.argv[-1]).read()
    directives = dict(re.findall(r"^#SBATCH --([a-z-]+)=(.*)$", text, re.M))
    job_id = str(4242 + len([name for name in os.listdir(state) if name.endswith(".json")]))
    output = directives["output"].replace("%j", job_id).replace("%x", directives["job-name"])
    with open(output, "w") as written:
        rc = subprocess.call(["bash", sys.argv[-1]], stdout=written, stderr=subprocess.STDOUT, cwd=directives["chdir"])
    json.dump({"rc": rc, "output": output, "name": directives["job-name"]}, open(os.path.join(state, job_id + ".json"), "w"))
    print(job_id)
    """,
    "sacct": COMMON + """
    job_id = sys.argv[sys.argv.index("-j") + 1]
    found = job(job_id)
    if found and found["rc"] == 0:
        print(job_id + "|COMPLETED|0:0|None|login01\\n" + job_id + ".batch|COMPLETED|0:0||login01")
    elif found:
        code = "{0}:0".format(found["rc"])
        print("|".join([job_id, "FAILED", code, "NonZeroExitCode", "login01"]))
        print("\\n".join("|".join([job_id + step, "FAILED", code, "", "login01"]) for step in (".batch", ".0")))
    """,
    "scontrol": COMMON + """
    found = job(sys.argv[-1])
    if not found:
        sys.exit("slurm_load_jobs error: Invalid job id specified")
    print("JobId={0} JobName={1} JobState={2} Reason=None ExitCode={3}:0 NodeList=login01 StdOut={4}".format(
        sys.argv[-1], found["name"], "COMPLETED" if found["rc"] == 0 else "FAILED", found["rc"], found["output"]))
    """,
    "squeue": COMMON + """
    queue = os.path.join(state, "queue")
    if os.path.exists(queue):
        print(open(queue).read().strip())
    """,
    "scancel": COMMON,
    "sinfo": COMMON,
    # srun's own options first, then the program and its arguments.
    "srun": COMMON + """
    words = sys.argv[1:]
    while words and words[0].startswith("-"):
        words.pop(0)
    os.execv(words[0], words)
    """,
}


def write_fake_slurm(bin_dir):
    """Every stand-in in bin_dir; each reads and writes the state folder named by $FAKE_SLURM."""
    for name, script in FAKES.items():
        write_fake_tool(bin_dir, name, script)

#!/usr/bin/env bash
# The project's test command. Installs what it needs (tools/bootstrap.sh), then runs the tiers in
# order, stopping at the first failure:
#   unit, sanity, lint, integration, e2e (the main job, make lab, end to end)
# Pass tier names to run only those: tools/test.sh unit lint. Named tiers run only when named:
#   molecule  the node roles' scenarios on fresh lab node containers (docs/development.md says what they
#             alone cover; make lab's site.yml converges the same roles on the lab nodes, twice, in e2e)
#   pytorch-horovod  PyTorch through Horovod, and DDP over SSH, on the lab (make lab-pytorch-horovod): Horovod's
#             compile against torch (about 4 minutes once), its second 5 GB image and two 5 GB environments would
#             take the cold test command past its budget
set -euo pipefail

repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo_root"

default_tiers=(unit sanity lint integration e2e)
named_tiers=(molecule pytorch-horovod)
if [ "$#" -gt 0 ]; then tiers=("$@"); else tiers=("${default_tiers[@]}"); fi
for tier in "${tiers[@]}"; do
    case " ${default_tiers[*]} ${named_tiers[*]} " in
        *" $tier "*) ;;
        *) echo "unknown tier '$tier'; expected one of: ${default_tiers[*]} ${named_tiers[*]}" >&2; exit 2 ;;
    esac
done

# Each tier's budget in seconds with every build cached (a warm run); together they are the warm run's 30
# minutes. A cold run's budget is 60 minutes in all, builds included. The table at the end prints the times
# beside them; it does not fail on time.
declare -A warm_budget=([bootstrap]=30 [unit]=120 [sanity]=60 [lint]=60 [integration]=540 [e2e]=990
                        [molecule]=600 [pytorch-horovod]=900)
cold_budget_total=3600
declare -A tier_seconds=() tier_result=()
run_started=$(date +%s)
# time_table: each tier's time, result and warm budget, then the whole run's against both budgets.
time_table() {
    local tier budget_sum=0 now total
    now=$(date +%s) total=$(( now - run_started ))
    # A tier that failed stopped the run: its time runs to now.
    for tier in bootstrap "${tiers[@]}"; do
        if [ "${tier_result[$tier]:-}" = failed ]; then tier_seconds[$tier]=$(( now - tier_started )); fi
    done
    printf '\n=== time per tier (budgets for a run with every build cached; a cold run has %s s in all) ===\n' \
        "$cold_budget_total"
    printf '%-16s %8s %8s  %s\n' tier seconds budget result
    for tier in bootstrap "${tiers[@]}"; do
        budget_sum=$(( budget_sum + ${warm_budget[$tier]} ))
        printf '%-16s %8s %8s  %s%s\n' "$tier" "${tier_seconds[$tier]:--}" "${warm_budget[$tier]}" \
            "${tier_result[$tier]:-not run}" \
            "$( [ -n "${tier_seconds[$tier]:-}" ] && [ "${tier_seconds[$tier]}" -gt "${warm_budget[$tier]}" ] && echo ', over')"
    done
    printf '%-16s %8s %8s  %s\n' all "$total" "$budget_sum" "(cold budget $cold_budget_total)"
    if [ -n "$(ls -A "$kept_dir" 2>/dev/null)" ]; then
        printf '=== the logs of the failed lab tests are kept in %s ===\n' "$kept_dir"
        ls -1 "$kept_dir"
    fi
}
trap 'time_table' EXIT
# Where the lab tiers copy a failed test's logs (tests/gpuops_testlib/kept_logs.py): emptied for this run.
kept_dir=$repo_root/.build/kept
rm -rf "$kept_dir"

tier_started=$(date +%s)
tier_result[bootstrap]=failed
bash tools/bootstrap.sh
tier_seconds[bootstrap]=$(( $(date +%s) - tier_started )) tier_result[bootstrap]=passed
# shellcheck disable=SC1091
source .venv/bin/activate
export ANSIBLE_CONFIG=$repo_root/ansible.cfg
export PYTHONDONTWRITEBYTECODE=1

# The builds the lab tiers run on start in the background as soon as the bootstrap is done, niced, in the order
# the tiers need them: from a cold cache they then use the CPU the unit, sanity and lint tiers leave idle (and
# the time those spend on the network) instead of stopping the lab tiers' first setups. The integration tier
# does not wait for them: a test's fixture that calls a build script still running here waits for it on the
# script's lock (tools/build_lock.sh) and then finds it cached. The e2e tier waits for all of them. Every build
# script is a no-op once its cache holds it, so a warm run only checks.
builds_log=$repo_root/.build/tier-builds.log
builds_pid=""
builds_started=0
# start_builds integration|e2e: the integration tier's builds, or all of them.
start_builds() {
    mkdir -p "$repo_root/.build"
    builds_started=$(date +%s)
    # A session of its own, so that the EXIT trap stops the builds with the test command. The script's $1 is
    # its own argument, after the name start_builds.
    # shellcheck disable=SC2016
    setsid nice -n 10 bash -c '
        set -euo pipefail
        bash tools/build_kube_binaries.sh
        bash tools/build_helm.sh
        bash tools/build_workload_image.sh
        [ "$1" = e2e ] || exit 0
        bash tools/build_lab_images.sh
        bash tools/build_workload_image.sh --framework pytorch --no-horovod
    ' start_builds "$1" >"$builds_log" 2>&1 &
    builds_pid=$!
    trap 'stop_builds; time_table' EXIT
}
stop_builds() {
    if [ -n "$builds_pid" ] && kill -0 "$builds_pid" 2>/dev/null; then kill -- "-$builds_pid" 2>/dev/null || true; fi
}
# Waits for the background builds; one that failed fails the test command with its log's tail.
wait_for_builds() {
    local waited_from
    [ -n "$builds_pid" ] || return 0
    waited_from=$(date +%s)
    if ! wait "$builds_pid"; then
        echo "----- last lines of $builds_log -----" >&2
        tail -n 40 "$builds_log" >&2
        echo "the builds the lab tiers run on failed (full log: $builds_log)" >&2
        exit 1
    fi
    builds_pid=""
    printf '=== the builds of the lab tiers: done %s s after they started, %s s of it waited for here ===\n' \
        "$(( $(date +%s) - builds_started ))" "$(( $(date +%s) - waited_from ))"
}

banner() { printf '\n=== %s ===\n' "$*"; }

# The unit tier's ten slowest tests are listed at its end, where its 120 s go. It runs on every core
# (tests/unit/pytest.ini).
run_unit() {
    pytest -q -p no:cacheprovider --durations=10 tests/unit
}

# ansible-test only runs from inside ansible_collections/<namespace>/<name>/: copy the files git
# knows about (tracked and not ignored) there, with the git metadata so it lists the same files.
# It runs from a virtualenv of its own holding only the matching ansible-core, and installs each
# test's pinned requirements into per-test virtualenvs (--requirements), bootstrapping pip there
# with tools/ansible_test_pip_bootstrap.py instead of a script it would download.
run_sanity() {
    local core_version sanity_venv pip_version
    core_version=$(python -c 'import ansible; print(ansible.__version__)')
    sanity_venv=${GPUOPS_CACHE:-$HOME/.cache/gpuops}/sanity-venv/$core_version
    if [ ! -x "$sanity_venv/bin/ansible-test" ]; then
        python3 -m venv "$sanity_venv"
        "$sanity_venv/bin/pip" install --quiet "ansible-core==$core_version"
    fi
    pip_version=$("$sanity_venv/bin/python" - <<'PY'
import pathlib, re, ansible_test
source = (pathlib.Path(ansible_test.__file__).parent / '_internal' / 'python_requirements.py').read_text()
print(re.search(r"pip='([0-9.]+)'", source).group(1))
PY
)
    mkdir -p "$HOME/.ansible/test/cache"
    cp tools/ansible_test_pip_bootstrap.py "$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"

    local sanity_root=$repo_root/.build/sanity/ansible_collections/gpuops/cluster
    rm -rf "$repo_root/.build/sanity"
    mkdir -p "$sanity_root"
    git ls-files -z --cached --others --exclude-standard | rsync -a --from0 --files-from=- ./ "$sanity_root/"
    # ansible-test resolves other collections beside this one: link the dependencies from galaxy.yml
    # out of the ansible package.
    local bundled dependency
    bundled=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/ansible_collections
    for dependency in $(python -c 'import yaml; print(" ".join(yaml.safe_load(open("galaxy.yml"))["dependencies"]))'); do
        mkdir -p "$repo_root/.build/sanity/ansible_collections/${dependency%%.*}"
        ln -s "$bundled/${dependency//.//}" "$repo_root/.build/sanity/ansible_collections/${dependency//.//}"
    done
    (cd "$sanity_root" && git init -q && git add -A \
        && "$sanity_venv/bin/ansible-test" sanity --local --requirements --python 3.11 --color no)
}

run_lint() {
    ansible-lint --profile production --strict
}

run_molecule() {
    local scenario_dir scenario
    local found=0
    # The scenarios run containers of the lab node image; molecule.yml reads its name from here.
    GPUOPS_NODE_IMAGE=$(bash tools/build_node_image.sh | tail -n 1)
    export GPUOPS_NODE_IMAGE
    for scenario_dir in molecule/*/; do
        [ -f "$scenario_dir/molecule.yml" ] || continue
        scenario=$(basename "$scenario_dir")
        found=1
        banner "molecule test -s $scenario"
        molecule test -s "$scenario"
    done
    [ "$found" -eq 1 ] || { echo "no molecule scenario found under molecule/" >&2; return 1; }
}

# The slowest tests of the two long tiers are listed at their end too: where the test command's time goes.
# The integration tier runs its files on two workers, each file in one, each worker with a lab control plane of its
# own: its tests wait on API servers, pods and playbooks about as much as they compute (707 s against 1,050 s in one
# process, on two cores).
run_integration() {
    pytest -q -p no:cacheprovider --durations=12 -n 2 --dist loadfile tests/integration
}

run_e2e() {
    pytest -q -p no:cacheprovider --durations=20 tests/e2e
}

run_pytorch_horovod() {
    pytest -q -p no:cacheprovider --durations=10 tests/pytorch_horovod
}

case " ${tiers[*]} " in
    *" e2e "*) start_builds e2e ;;
    *" integration "*) start_builds integration ;;
esac
for tier in "${tiers[@]}"; do
    if [ "$tier" = e2e ]; then wait_for_builds; fi
    banner "$tier"
    tier_started=$(date +%s)
    tier_result[$tier]=failed
    "run_${tier//-/_}"
    tier_seconds[$tier]=$(( $(date +%s) - tier_started )) tier_result[$tier]=passed
    printf '=== %s passed in %s s ===\n' "$tier" "${tier_seconds[$tier]}"
done

"""Registry credentials without a cluster: the registry_credentials role's input check and what it publishes, the
Secret's .dockerconfigjson, and every pod spec the collection makes referencing the Secret (the device plugin's
DaemonSet, from the template and from NVIDIA's manifest, the GPU Operator's values and ClusterPolicy, the launchers'
and the smoke pods' job modules), and never a credential in the output.

The role cases run the role itself with no namespace to write to (it reaches the API only to write a Secret);
the render cases load a role's defaults and vars and render what its tasks pass on. Every case is a host of one
ansible-playbook run on localhost (gpuops_testlib.role_cases.run_task_cases). The Secret in real namespaces, its
second run with changed=0 and a run with -v --diff that prints no credential belong to the e2e tier.
"""

import base64
import json

import pytest
import yaml

from gpuops_testlib.role_cases import ROLES, role_vars_case, run_task_cases, shown, template_msg

CHECK_TASK = "Check the variables"
PULL_SECRETS = "registry_credentials_image_pull_secrets"

# Values that no case prints on purpose: none may appear anywhere in the run's output.
NGC_KEY = "nvapi-never-shown-0d6f0c8e"
MIRROR_PASSWORD = "mirror-password-never-shown"
BOTH_PASSWORD, BOTH_TOKEN = "both-password-never-shown", "both-token-never-shown"
NEVER_SHOWN = (NGC_KEY, MIRROR_PASSWORD, BOTH_PASSWORD, BOTH_TOKEN)
# The render case shows the Secret's data on purpose, with a value of its own.
RENDERED_KEY = "nvapi-rendered"

NGC = {"gpuops_registry_server": "nvcr.io", "gpuops_registry_username": "$oauthtoken", "gpuops_registry_token": NGC_KEY}
MIRROR = {"gpuops_registry_server": "mirror.example.com:5000", "gpuops_registry_username": "puller",
          "gpuops_registry_password": MIRROR_PASSWORD, "gpuops_registry_secret_name": "site-mirror"}


def run_role(role_vars, **include_vars):
    """The role included as the roles that make pods include it, with no namespace: then the published list."""
    include = {"name": "Include", "ansible.builtin.include_role": {"name": "gpuops.cluster.registry_credentials"},
               "vars": dict({"registry_credentials_namespaces": []}, **include_vars)}
    return [include, {"name": "Published", "ansible.builtin.debug": {"var": PULL_SECRETS}}], role_vars


# What the render cases show (role_vars_case): the device plugin's DaemonSet, the GPU Operator's pull secret settings.
DAEMONSET = template_msg("nvidia_device_plugin", "daemonset.yml.j2")
OPERATOR_SETTINGS = "{{ __gpu_operator_pull_secret_settings }}"


MANIFEST_OBJECTS = [
    {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "nvidia-device-plugin", "namespace": "kube-system"}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nvidia-device-plugin-daemonset",
                                                                "namespace": "kube-system"},
     "spec": {"template": {"spec": {"nodeSelector": {"nvidia.com/gpu.present": "true"},
                                    "containers": [{"name": "plugin", "image": "nvcr.io/nvidia/k8s-device-plugin"}]}}}},
]
LAUNCHERS = ("mpijob_launcher", "tfjob_launcher", "pytorchjob_launcher", "pod_launcher", "job_launcher", "gpu_validation")


def pull_secrets_of(role):
    """The variable a role's jobs take their pull Secrets from: the Kubernetes launchers', from their shared body."""
    return "__%s_image_pull_secrets" % ("gpu_validation" if role == "gpu_validation" else "kube_job")


def body_of(role):
    """The role whose tasks put the Secret in the namespace: the Kubernetes launchers' shared body, or the role."""
    return role if role == "gpu_validation" else "kube_job"


CASES = {
    # The role itself.
    "ngc": run_role(NGC),
    "mirror": run_role(MIRROR),
    "nothing_set": run_role({}),
    "server_alone": run_role({"gpuops_registry_server": "mirror.example.com:5000"}),
    "absent": run_role(NGC, registry_credentials_state="absent"),
    "scheme_and_both_secrets": run_role({"gpuops_registry_server": "https://mirror.example.com",
                                         "gpuops_registry_username": "puller", "gpuops_registry_password": BOTH_PASSWORD,
                                         "gpuops_registry_token": BOTH_TOKEN}),
    "user_without_secret": run_role({"gpuops_registry_server": "nvcr.io", "gpuops_registry_username": "$oauthtoken",
                                     "gpuops_registry_secret_name": "NGC_Key"}),
    "secret_without_user_or_server": run_role({"gpuops_registry_token": NGC_KEY},
                                              registry_credentials_namespaces=["GPU Operator"]),
    "spaces": run_role(dict(NGC, gpuops_registry_server="nvcr.io /nvidia")),
    # What the Secret holds.
    "dockerconfigjson": role_vars_case("registry_credentials", "{{ __registry_credentials_dockerconfigjson }}",
                                       host_vars={"gpuops_registry_server": "nvcr.io",
                                                  "gpuops_registry_username": "$oauthtoken",
                                                  "gpuops_registry_token": RENDERED_KEY}),
    # The pods that reference it.
    "daemonset_pulling": role_vars_case("nvidia_device_plugin", DAEMONSET, {PULL_SECRETS: ["gpuops-registry"]}),
    "daemonset_as_before": role_vars_case("nvidia_device_plugin", DAEMONSET, {PULL_SECRETS: []}),
    "manifest_pulling": role_vars_case("nvidia_device_plugin", "{{ __nvidia_device_plugin_manifest_pulling }}", {
        PULL_SECRETS: ["gpuops-registry"], "__nvidia_device_plugin_objects": MANIFEST_OBJECTS}),
    "operator_helm": role_vars_case("gpu_operator", OPERATOR_SETTINGS, {
        PULL_SECRETS: ["gpuops-registry"], "__gpu_operator_method": "helm"}, {"gpuops_gpu_stack": "gpu_operator"}),
    "operator_olm": role_vars_case("gpu_operator", OPERATOR_SETTINGS, {
        PULL_SECRETS: ["gpuops-registry"], "__gpu_operator_method": "olm"}, {"gpuops_gpu_stack": "gpu_operator"}),
    "operator_none": role_vars_case("gpu_operator", OPERATOR_SETTINGS, {
        PULL_SECRETS: [], "__gpu_operator_method": "helm"}, {"gpuops_gpu_stack": "gpu_operator"}),
    # Being removed, the operator's release takes none (a fact from another role of the run is no reason).
    "operator_absent": role_vars_case("gpu_operator", OPERATOR_SETTINGS, {
        PULL_SECRETS: ["gpuops-registry"], "__gpu_operator_method": "helm"}, {"gpuops_gpu_stack": "device_plugin"}),
}
CASES.update(("%s_pulling" % role, role_vars_case(role, "{{ %s }}" % pull_secrets_of(role),
                                                  {PULL_SECRETS: ["gpuops-registry"]})) for role in LAUNCHERS)
CASES.update(("%s_as_before" % role, role_vars_case(role, "{{ %s }}" % pull_secrets_of(role))) for role in LAUNCHERS)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    return run_task_cases(tmp_path_factory.mktemp("registry_credentials"), CASES)


def problems(ran, name):
    """The problem lines of the role's input check, which failed before anything else ran."""
    result = ran[name]
    assert result.rc != 0
    [(task, failure)] = result.failed()
    assert task == CHECK_TASK, failure
    assert result.results("Published") == []
    return failure["problems"]


def test_no_credential_is_ever_in_the_output(ran):
    run = next(iter(ran.values())).run
    for value in NEVER_SHOWN:
        assert value not in run.output


@pytest.mark.parametrize("case, published", [
    ("ngc", ["gpuops-registry"]),
    ("mirror", ["site-mirror"]),
    # Without a password or a token: nothing to create, nothing for the pods to reference.
    ("nothing_set", []),
    ("server_alone", []),
    # The Secret being removed, no pod may reference it.
    ("absent", []),
])
def test_the_role_publishes_the_secret_the_pods_reference_only_where_it_creates_one(ran, case, published):
    assert shown(ran, case, "Published", PULL_SECRETS) == published


HIDDEN = "a value (hidden: no_log)"


@pytest.mark.parametrize("case, lines", [
    ("scheme_and_both_secrets", [
        "gpuops_registry_server: got 'https://mirror.example.com'; expected a registry host, with a port where it "
        "needs one, such as nvcr.io or mirror.example.com:5000 (no scheme such as https://, no spaces)",
        "gpuops_registry_token: got %s (with gpuops_registry_password=%s); expected one of gpuops_registry_password and "
        "gpuops_registry_token, not both" % (HIDDEN, HIDDEN)]),
    ("user_without_secret", [
        "gpuops_registry_username: got '$oauthtoken'; expected gpuops_registry_password or gpuops_registry_token with "
        "it (for NGC the API key as gpuops_registry_token), or no user name",
        "gpuops_registry_secret_name: got 'NGC_Key'; expected a Secret's name, a DNS-1123 subdomain such as "
        "gpuops-registry"]),
    ("secret_without_user_or_server", [
        "gpuops_registry_username: got null; expected the user name the password or token belongs to ($oauthtoken for "
        "NGC's API key)",
        "gpuops_registry_server: got null; expected the registry the password or token is for, such as nvcr.io or "
        "mirror.example.com:5000",
        """registry_credentials_namespaces: got ["GPU Operator"]; expected namespace names, each a DNS-1123 label such """
        """as gpu-operator"""]),
    ("spaces", [
        "gpuops_registry_server: got 'nvcr.io /nvidia'; expected a registry host, with a port where it needs one, such "
        "as nvcr.io or mirror.example.com:5000 (no scheme such as https://, no spaces)"]),
])
def test_wrong_values_are_refused_before_any_api_call_naming_them_and_never_a_secret(ran, case, lines):
    assert problems(ran, case) == lines


def test_the_secret_holds_a_docker_config_for_the_server_as_kubectl_writes_it(ran):
    config = json.loads(shown(ran, "dockerconfigjson"))
    auth = base64.b64encode(("$oauthtoken:" + RENDERED_KEY).encode()).decode()
    assert config == {"auths": {"nvcr.io": {"username": "$oauthtoken", "password": RENDERED_KEY, "auth": auth}}}


def test_the_device_plugin_daemonset_pulls_with_the_secret_and_is_as_before_without_one(ran):
    pod = shown(ran, "daemonset_pulling")["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "gpuops-registry"}]
    assert "imagePullSecrets" not in shown(ran, "daemonset_as_before")["spec"]["template"]["spec"]


def test_the_manifests_daemonset_pulls_with_the_secret_and_its_other_objects_are_kept(ran):
    service_account, daemonset_object = shown(ran, "manifest_pulling")
    assert service_account == MANIFEST_OBJECTS[0]
    pod = daemonset_object["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "gpuops-registry"}]
    assert pod["nodeSelector"] == {"nvidia.com/gpu.present": "true"}
    assert pod["containers"] == MANIFEST_OBJECTS[1]["spec"]["template"]["spec"]["containers"]


OPERANDS = ["dcgm", "dcgmExporter", "devicePlugin", "driver", "gfd", "migManager", "toolkit", "validator"]
SECRETS = {"imagePullSecrets": ["gpuops-registry"]}


def test_the_gpu_operator_components_pull_with_the_secret_and_helm_gives_it_to_the_operator_too(ran):
    helm, olm = shown(ran, "operator_helm"), shown(ran, "operator_olm")
    for settings in (helm, olm):
        assert sorted(settings) == sorted(OPERANDS + ["operator"])
        assert all(settings[operand] == SECRETS for operand in OPERANDS)
    # The chart's operator Deployment takes operator.imagePullSecrets; under OLM the CSV makes it, and the
    # ClusterPolicy has no such field.
    assert helm["operator"] == dict(SECRETS, initContainer=SECRETS)
    assert olm["operator"] == {"initContainer": SECRETS}
    assert shown(ran, "operator_none") == {}
    assert shown(ran, "operator_absent") == {}


@pytest.mark.parametrize("role", LAUNCHERS)
def test_the_launchers_and_the_smoke_pods_pass_the_secret_to_their_job_module(ran, role):
    assert shown(ran, "%s_pulling" % role) == ["gpuops-registry"]
    assert shown(ran, "%s_as_before" % role) == []


# The role files, read as YAML: what a run with a real cluster would do, checked where no cluster is.

JOB_MODULES = ("gpuops.cluster.mpijob", "gpuops.cluster.tfjob", "gpuops.cluster.pytorchjob", "gpuops.cluster.batch_job")
INCLUDE = "ansible.builtin.include_role"


def tasks_of(role):
    """Every task of a role's task files, blocks opened, with its file."""
    found = []

    def walk(tasks, path):
        for task in tasks or []:
            found.append((path.name, task))
            for section in ("block", "rescue", "always"):
                walk(task.get(section), path)
    for path in sorted((ROLES / role / "tasks").glob("*.yml")):
        walk(yaml.safe_load(path.read_text()), path)
    return found


def job_module_defaults(role):
    """The options every job module of a role's tasks is given without writing them: the Kubernetes launchers' shared
    body runs their jobs under module_defaults for the collection's action group of job modules (meta/runtime.yml)."""
    if body_of(role) == role:
        return {}
    runtime = yaml.safe_load((ROLES.parent / "meta" / "runtime.yml").read_text())
    assert sorted("gpuops.cluster." + name for name in runtime["action_groups"]["jobs"]) == sorted(JOB_MODULES)
    launch = yaml.safe_load((ROLES / "kube_job" / "tasks" / "launch.yml").read_text())
    given = [task["module_defaults"]["group/gpuops.cluster.jobs"] for task in launch if "module_defaults" in task]
    # The run and the cleanup at the end, alike.
    assert len(given) == 2 and given[0] == given[1]
    return given[0]


@pytest.mark.parametrize("role", LAUNCHERS)
def test_every_job_a_role_creates_references_the_secret_it_put_in_the_namespace(role):
    tasks = tasks_of(role)
    creating = [(path, task) for path, task in tasks for module in JOB_MODULES
                if module in task and task[module].get("state", "present") == "present"]
    assert creating
    defaults = job_module_defaults(role)
    for path, task in creating:
        args = dict(defaults, **next(task[module] for module in JOB_MODULES if module in task))
        assert args.get("image_pull_secrets") == "{{ %s }}" % pull_secrets_of(role), (path, task["name"])
    includes = [task for _path, task in tasks_of(body_of(role))
                if task.get(INCLUDE, {}).get("name") == "gpuops.cluster.registry_credentials"]
    assert len(includes) == 1
    # Its tasks run whatever tags chose the role's.
    assert includes[0][INCLUDE]["apply"] == {"tags": ["always"]}


def test_every_task_of_the_registry_role_that_handles_the_credentials_logs_nothing():
    handling = [(path, task) for path, task in tasks_of("registry_credentials")
                if "kubernetes.core.k8s" in task and task["kubernetes.core.k8s"].get("kind") != "Namespace"]
    assert [(path, task["name"]) for path, task in handling] == [
        ("absent.yml", "Remove the registry credentials Secret from each namespace"),
        ("present.yml", "Create or update the registry credentials Secret in each namespace")]
    for _path, task in handling:
        assert task["no_log"] is True
        assert task["kubernetes.core.k8s"]["hidden_fields"] == ["data"]
    options = yaml.safe_load((ROLES / "registry_credentials" / "meta" / "argument_specs.yml").read_text())
    options = options["argument_specs"]["main"]["options"]
    assert [name for name, option in options.items() if option.get("no_log")] == [
        "gpuops_registry_password", "gpuops_registry_token"]

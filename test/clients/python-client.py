"""
Drives the agent's API with Debian's python3-kubernetes, as a user's script would, and prints one
JSON line per step for python-client.test.ts to check: versions, create (a bare body, without
apiVersion or kind), the library's watch helper, list, read log, exec, delete (port-forward has its
own script, portforward-python.py).
Usage: python-client.py KUBECONFIG NAMESPACE POD
"""
import json
import sys
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException
from kubernetes.stream import stream

kubeconfig, namespace, pod = sys.argv[1], sys.argv[2], sys.argv[3]
config.load_kube_config(config_file=kubeconfig)
core = client.CoreV1Api()


def report(step, **facts):
    print(json.dumps({"step": step, **facts}), flush=True)


def attempt(step, action):
    """One step; an API error is reported with its status and body rather than ending the script."""
    try:
        action()
    except ApiException as error:
        report(step, error={"status": error.status, "body": error.body})
    except Exception as error:  # noqa: BLE001 - the test reads what went wrong
        report(step, error={"type": type(error).__name__, "message": str(error)})


def versions():
    found = client.CoreApi().get_api_versions()
    report("versions", versions=found.versions, addresses=[a.server_address for a in found.server_address_by_client_cid_rs])


def create():
    # A bare dict: the library sends it as given, with neither apiVersion nor kind.
    body = {
        "metadata": {"name": pod, "labels": {"client": "python"}},
        "spec": {
            # Ready a second after it runs, so the watch below sees it change, not only appear.
            "containers": [{"name": "web", "image": "busybox", "command": ["/usr/bin/python3", "-c", "import time; print('hello from python', flush=True); time.sleep(600)"], "readinessProbe": {"exec": {"command": ["true"]}, "initialDelaySeconds": 1, "periodSeconds": 1}}],
            "terminationGracePeriodSeconds": 1,
        },
    }
    created = core.create_namespaced_pod(namespace, body)
    report("create", name=created.metadata.name, uid=created.metadata.uid, kind=created.kind, phase=created.status.phase)


def watch_until_running():
    types = []
    phases = []
    watcher = watch.Watch()
    for event in watcher.stream(core.list_namespaced_pod, namespace, field_selector=f"metadata.name={pod}", timeout_seconds=30):
        types.append(event["type"])
        phases.append(event["object"].status.phase)
        ready = [c.ready for c in (event["object"].status.container_statuses or [])]
        if event["object"].status.phase == "Running" and ready == [True]:
            watcher.stop()
    report("watch", types=types, phases=phases)


def list_pods():
    listed = core.list_namespaced_pod(namespace, label_selector="client=python")
    report("list", names=[p.metadata.name for p in listed.items], resourceVersion=listed.metadata.resource_version)


def read_log():
    deadline = time.time() + 10
    text = ""
    while time.time() < deadline and "hello" not in text:
        text = core.read_namespaced_pod_log(pod, namespace)
        time.sleep(0.1)
    report("log", text=text)


def exec_command():
    session = stream(core.connect_get_namespaced_pod_exec, pod, namespace, command=["sh", "-c", "echo out; echo err >&2; exit 3"], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    session.run_forever(timeout=10)
    report("exec", stdout=session.read_stdout(), stderr=session.read_stderr(), returncode=session.returncode)
    session.close()


def delete():
    deleted = core.delete_namespaced_pod(pod, namespace)
    report("delete", kind=deleted.kind, deletionTimestamp=str(deleted.metadata.deletion_timestamp) if deleted.metadata.deletion_timestamp else None)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            core.read_namespaced_pod(pod, namespace)
        except ApiException as error:
            report("gone", status=error.status)
            return
        time.sleep(0.2)
    report("gone", status=None)


for name, action in [("versions", versions), ("create", create), ("watch", watch_until_running), ("list", list_pods), ("log", read_log), ("exec", exec_command), ("delete", delete)]:
    attempt(name, action)

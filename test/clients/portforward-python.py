"""
Port-forward through the agent with Debian's python3-kubernetes, as a user's script does
(kubernetes.stream.portforward: the WebSocket channel protocol), printing one JSON line per step
for portforward-clients.test.ts: one port, two ports in one forward, a port nothing listens on,
then ROUNDS forwards one after another and PARALLEL at once.
Usage: portforward-python.py KUBECONFIG NAMESPACE POD PORT_A PORT_B DEAD_PORT ROUNDS PARALLEL
"""
import json
import sys
import threading
import time

from kubernetes import client, config
from kubernetes.stream import portforward

kubeconfig, namespace, pod = sys.argv[1], sys.argv[2], sys.argv[3]
port_a, port_b, dead_port, rounds, parallel = (int(value) for value in sys.argv[4:9])
config.load_kube_config(config_file=kubeconfig)
core = client.CoreV1Api()


def report(step, **facts):
    print(json.dumps({"step": step, **facts}), flush=True)


def get(forward, port):
    """One HTTP/1.0 GET on the forwarded port's socket; everything until the pod closes."""
    sock = forward.socket(port)
    sock.setblocking(True)
    sock.sendall(b"GET / HTTP/1.0\r\nHost: pod\r\n\r\n")
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    sock.close()
    return answer.decode(errors="replace")


def body(answer):
    return answer.split("\r\n\r\n", 1)[-1]


def forward_once(port):
    forward = portforward(core.connect_get_namespaced_pod_portforward, pod, namespace, ports=str(port))
    answer = get(forward, port)
    return {"body": body(answer), "status": answer.split("\r\n", 1)[0], "portError": forward.error(port)}


def attempt(step, action):
    try:
        report(step, **action())
    except Exception as error:  # noqa: BLE001 - the test reads what went wrong
        report(step, error={"type": type(error).__name__, "message": str(error)})


def two_ports():
    forward = portforward(core.connect_get_namespaced_pod_portforward, pod, namespace, ports=f"{port_a},{port_b}")
    answers = {}
    # Both at once: each port is its own connection on the one WebSocket.
    threads = [threading.Thread(target=lambda p=p: answers.__setitem__(p, body(get(forward, p)))) for p in (port_a, port_b)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return {"a": answers.get(port_a), "b": answers.get(port_b), "portErrors": [forward.error(port_a), forward.error(port_b)]}


def dead():
    # Nothing sent: the error may come first, and the library then closes the socket (a send would
    # be a BrokenPipeError). What the socket still brings is read to its end.
    forward = portforward(core.connect_get_namespaced_pod_portforward, pod, namespace, ports=str(dead_port))
    sock = forward.socket(dead_port)
    sock.setblocking(True)
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return {"answer": answer.decode(errors="replace"), "portError": forward.error(dead_port)}


def sequential():
    started = time.monotonic()
    bodies = [forward_once(port_a)["body"] for _ in range(rounds)]
    return {"bodies": bodies, "seconds": round(time.monotonic() - started, 3)}


def concurrent():
    results = [None] * parallel

    def one(index):
        try:
            results[index] = forward_once(port_b if index % 2 else port_a)["body"]
        except Exception as error:  # noqa: BLE001
            results[index] = f"{type(error).__name__}: {error}"

    started = time.monotonic()
    threads = [threading.Thread(target=one, args=(index,)) for index in range(parallel)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return {"bodies": results, "seconds": round(time.monotonic() - started, 3)}


attempt("single", lambda: forward_once(port_a))
attempt("two-ports", two_ports)
attempt("dead", dead)
attempt("sequential", sequential)
attempt("concurrent", concurrent)

/**
 * The API server's ServiceAccount admission on a pod's create, as the agent's API applies it
 * (plugin/pkg/admission/serviceaccount): the default ServiceAccount, the kube-api-access volume and
 * its mounts, the opt-outs, the ServiceAccount's imagePullSecrets, and the 403 for a missing one.
 */
import { describe, expect, test } from "bun:test";
import { admitServiceAccount } from "../../src/api/resources/pods/service-account-admission.ts";
import { ApiError } from "../../src/api/http/status.ts";
import type { StoredObject } from "../../src/store/object-store.ts";

const TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

function account(name: string, fields: Record<string, unknown> = {}): StoredObject {
  return { resource: "serviceaccounts", namespace: "demo", name, uid: `uid-${name}`, object: { metadata: { name, namespace: "demo" }, ...fields }, deleted: false, revision: 1, createdRevision: 1 };
}

function admitted(spec: Record<string, unknown>, accounts: StoredObject[] = [account("default")], metadata: Record<string, unknown> = { name: "web" }) {
  const pod = { metadata, spec: structuredClone(spec) };
  admitServiceAccount(pod, "demo", "web", (name) => accounts.find((a) => a.name === name));
  return pod.spec as Record<string, any>;
}

const app = (name: string, extra: Record<string, unknown> = {}) => ({ name, image: "busybox", ...extra });

describe("ServiceAccount admission", () => {
  test("a pod naming none runs as default; every init and app container mounts one kube-api-access volume read-only at the token path", () => {
    const spec = admitted({ initContainers: [app("setup")], containers: [app("web"), app("side", { volumeMounts: [{ name: "data", mountPath: "/data" }] })], volumes: [{ name: "data", emptyDir: {} }] });
    expect(spec.serviceAccountName).toBe("default");
    expect(spec.serviceAccount).toBe("default");
    const volume = spec.volumes[1];
    expect(volume.name).toMatch(/^kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(volume.projected).toEqual({
      defaultMode: 420,
      sources: [
        { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
      ],
    });
    const mount = { name: volume.name, readOnly: true, mountPath: TOKEN_PATH };
    expect(spec.initContainers[0].volumeMounts).toEqual([mount]);
    expect(spec.containers[0].volumeMounts).toEqual([mount]);
    expect(spec.containers[1].volumeMounts).toEqual([{ name: "data", mountPath: "/data" }, mount]);
  });

  test("the deprecated serviceAccount alias names the account when serviceAccountName does not", () => {
    const spec = admitted({ serviceAccount: "builder", containers: [app("web")] }, [account("default"), account("builder")]);
    expect(spec.serviceAccountName).toBe("builder");
    expect(spec.serviceAccount).toBe("builder");
  });

  test("automount off on the pod, or on its ServiceAccount when the pod says nothing, mounts nothing; the pod's true wins over the account's false", () => {
    expect(admitted({ automountServiceAccountToken: false, containers: [app("web")] }).volumes).toBeUndefined();
    const quiet = [account("default", { automountServiceAccountToken: false })];
    expect(admitted({ containers: [app("web")] }, quiet).volumes).toBeUndefined();
    expect(admitted({ automountServiceAccountToken: true, containers: [app("web")] }, quiet).volumes).toHaveLength(1);
  });

  test("a container that mounts something at the token path keeps it; no volume is added when none needs it; a kube-api-access volume of the pod's is used", () => {
    const own = { name: "mine", mountPath: TOKEN_PATH };
    const spec = admitted({ containers: [app("web", { volumeMounts: [own] })], volumes: [{ name: "mine", emptyDir: {} }] });
    expect(spec.containers[0].volumeMounts).toEqual([own]);
    expect(spec.volumes).toEqual([{ name: "mine", emptyDir: {} }]);
    const given = { name: "kube-api-access-given", projected: { sources: [] } };
    const reused = admitted({ containers: [app("web")], volumes: [given] });
    expect(reused.volumes).toEqual([given]);
    expect(reused.containers[0].volumeMounts).toEqual([{ name: "kube-api-access-given", readOnly: true, mountPath: TOKEN_PATH }]);
  });

  test("ephemeral containers are left as they are", () => {
    const spec = admitted({ containers: [app("web")], ephemeralContainers: [app("debugger")] });
    expect(spec.ephemeralContainers[0].volumeMounts).toBeUndefined();
  });

  test("a pod without imagePullSecrets takes its ServiceAccount's; one with its own keeps them", () => {
    const accounts = [account("default", { imagePullSecrets: [{ name: "regcred" }] })];
    expect(admitted({ containers: [app("web")] }, accounts).imagePullSecrets).toEqual([{ name: "regcred" }]);
    expect(admitted({ imagePullSecrets: [{ name: "mine" }], containers: [app("web")] }, accounts).imagePullSecrets).toEqual([{ name: "mine" }]);
  });

  test("a ServiceAccount that does not exist is the plugin's 403; a missing default is the one the namespace is given at this create", () => {
    let refused: unknown;
    try {
      admitted({ serviceAccountName: "builder", containers: [app("web")] });
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe(403);
    expect((refused as ApiError).message).toBe('pods "web" is forbidden: error looking up service account demo/builder: serviceaccount "builder" not found');
    expect(admitted({ containers: [app("web")] }, []).volumes).toHaveLength(1);
  });

  test("a mirror pod is not changed, and may not name a ServiceAccount", () => {
    const mirror = { name: "web", annotations: { "kubernetes.io/config.mirror": "hash" } };
    expect(admitted({ containers: [app("web")] }, [account("default")], mirror)).toEqual({ containers: [app("web")] });
    expect(() => admitted({ serviceAccountName: "default", containers: [app("web")] }, [account("default")], mirror)).toThrow("a mirror pod may not reference service accounts");
  });
});

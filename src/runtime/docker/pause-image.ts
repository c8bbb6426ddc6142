/** The docker runtime's sandbox image when `--pause-image` is not given: the kubelet's of 1.3x (pulled if missing). */
export const DEFAULT_PAUSE_IMAGE = "registry.k8s.io/pause:3.10";

/**
 * The API's one user: whoever holds the agent's bearer token (the kubeconfig `minikubelet
 * kubeconfig` prints names it). It is a cluster admin, as a kubeadm cluster's admin.conf user is:
 * in `system:masters`, whose members every request is allowed for, and `system:authenticated`,
 * which the API server adds to every authenticated user.
 */
export const API_USER = {
  username: "minikubelet-admin",
  groups: ["system:masters", "system:authenticated"],
} as const;

/*
 * The pod sandbox's process, like Kubernetes' pause: it holds the pod's namespaces open and does
 * nothing else. It must reap zombies (with shareProcessNamespace it is PID 1 for every container of
 * the pod) and exit 0 on SIGTERM/SIGINT so stopping a sandbox is quick and clean.
 * Built static (gcc -static -Os) so the image needs no libc: scripts/docker-env imports it alone.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  /* Reap every exited child: with a shared PID namespace, orphans are re-parented to us. */
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction stop = {0};
  stop.sa_handler = on_stop;
  sigaction(SIGTERM, &stop, NULL);
  sigaction(SIGINT, &stop, NULL);

  struct sigaction child = {0};
  child.sa_handler = on_child;
  child.sa_flags = SA_NOCLDSTOP | SA_RESTART;
  sigaction(SIGCHLD, &child, NULL);

  for (;;) pause();
  return 1; /* unreachable */
}

/*
 * minikubelet-monitor: one container's monitor, minikubelet's conmon. It starts the container's
 * process, copies its stdout and stderr into a CRI-format log (rotating it by size), and records
 * how the process ended, in the files src/runtime/process/process-files.ts reads:
 *
 *   DIR/pid           "<pid> <starttime> - <monitorPid> <monitorStarttime>\n", by the container's
 *                     process itself before it execs (its mtime is the start time: the `-`)
 *   EVENTS/ID.started the moment after `pid`
 *   DIR/.ended        "<code> -\n" the moment the main process ended (its mtime is the finish time)
 *   DIR/exit          "<code> -\n" once the output is drained: a reader that sees it has every line
 *   DIR/exit-code     a symlink to "<code>", instead of `exit` when the disk has no room for a byte
 *                     (a short symlink lives in its inode): a full disk still tells how it ended
 *   EVENTS/ID.exited  after `exit`
 *
 * Each of these is a file created and filled by one short write, so a reader sees all of it or
 * too little to parse. It runs detached (its own session, stdio on /dev/null) so it outlives the
 * agent, and it must stay tiny: a host may run a thousand of them. So there is no malloc; every
 * buffer is static, one 16 KiB line buffer per stream, read into directly.
 *
 *   minikubelet-monitor --dir DIR --events EVENTS --id ID --log LOGFILE --log-max-bytes N
 *       --log-max-files N [--gzip PATH] [--cgroup-join FILE]... [--drain-ms N]
 *       [--stdin] [--stdin-once] [--tty] [--attach-socket PATH]
 *       [--bind SRC DST]... [--bind-ro SRC DST]... [--read-only-root] [--hostname NAME]
 *       [IDENTITY] -- COMMAND [ARGS...]
 *   minikubelet-monitor --enter PID --wd DIR [IDENTITY] -- COMMAND [ARGS...]
 *
 * IDENTITY is who the command runs as, the container's security context as the kubelet hands it to
 * a runtime: [--user UID] [--group GID] [--groups GID,...] [--capabilities HEX] [--no-new-privs]
 * [--oom-score-adj N] (N the kubelet's OOM score adjustment, -1000..1000; one the kernel refuses is
 * said in monitor.err and the command runs with the score it has).
 * --capabilities is the bounding set kept (a bit per capability; the rest are dropped, and nothing
 * is inherited), so a root process has exactly those after its exec and any other user none.
 *
 * --stdin: the container's stdin is a pipe the monitor holds open (not /dev/null); --tty: it runs
 * on a pseudo-terminal whose output is logged as stdout. --attach-socket: a unix socket (0600) that
 * `kubectl attach` reaches through the agent, speaking frames `type, uint32 BE length, payload`:
 *   client -> monitor: 3 HELLO (first; 1 byte: 1 = this attach feeds stdin), 0 STDIN bytes,
 *                      1 CLOSE_STDIN, 2 RESIZE (uint16 BE columns, uint16 BE rows; tty only)
 *   monitor -> client: 1 STDOUT, 2 STDERR (from the moment it connected), 3 EXIT (the code in
 *                      ASCII, once the output is drained, just before the exit file; then closed)
 * CLOSE_STDIN is a detach, except with --stdin-once and no tty from the first attach that fed
 * stdin (or its going away): then the container's stdin is closed, as docker and conmon do.
 * --bind/--bind-ro: the container gets its own mount namespace (private, so nothing reaches the
 * host) with SRC bound at DST (read-only for --bind-ro); DST must exist. --read-only-root: in that
 * namespace the root mount is read-only (what is mounted on it, the volumes among them, is not).
 * --hostname: the container gets its own UTS namespace with that hostname.
 * --enter: no monitor at all, but an exec's starter: it joins the mount, UTS and IPC namespaces of
 * process PID (those that are not its own already), changes to DIR there, takes IDENTITY and
 * becomes the command, its stdio untouched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* The kubelet's (and containerd's) longest record: a longer line is split into P records. */
#define LINE_BYTES 16384
/* "2026-12-02T14:05:01.123456789Z stdout F ": the header is always this long. */
#define HDR 40
#define TS_LEN 30
#define MAX_CGROUPS 16
#define RETRY_MS 200
#define PATH_BYTES 4096

static const char *dir, *events, *id, *log_path, *gzip_path;
static const char *cgroup_join[MAX_CGROUPS];
static int n_cgroups;
static unsigned long long max_bytes, max_files, drain_ms = 2000;
static char **command;
static int stdin_mode, stdin_once, tty_mode;
static const char *attach_path;
#define MAX_BINDS 64
static struct bind {
  const char *src, *dst;
  int read_only;
} binds[MAX_BINDS];
static int n_binds;
static int read_only_root;
static const char *hostname;
static const char *enter_pid, *enter_wd;

/* IDENTITY: -1 (and n_groups -1) leaves what the monitor has. */
#define MAX_GROUPS 64
static long long run_uid = -1, run_gid = -1;
static gid_t run_groups[MAX_GROUPS];
static int n_groups = -1;
static int caps_given, no_new_privs;
static const char *oom_score_adj;
static unsigned long long caps_keep;

/* What only the container's process (before its exec) or an exec's starter runs: kept apart from
 * the monitor's own code, so the pages a long-lived monitor keeps resident stay few. */
#define COLD __attribute__((cold, noinline))

static int err_fd = -1;
/* The paths, packed into one arena: a buffer each would touch a page each. */
static char path_arena[4 * PATH_BYTES];
static size_t arena_used;
static char *pid_path, *ended_path, *exit_path, *exit_code_path, *new_log_path, *started_path, *exited_path, *log_dir, *err_path;
static const char *log_base;
static size_t log_base_len;

static void usage(const char *problem) {
  if (problem) dprintf(2, "minikubelet-monitor: %s\n", problem);
  dprintf(2,
          "usage: minikubelet-monitor --dir DIR --events EVENTS --id ID --log LOGFILE --log-max-bytes N\n"
          "           --log-max-files N [--gzip PATH] [--cgroup-join FILE]... [--drain-ms N]\n"
          "           [--stdin] [--stdin-once] [--tty] [--attach-socket PATH]\n"
          "           [--bind SRC DST]... [--bind-ro SRC DST]... [--read-only-root] [--hostname NAME]\n"
          "           [IDENTITY] -- COMMAND [ARGS...]\n"
          "       minikubelet-monitor --enter PID --wd DIR [IDENTITY] -- COMMAND [ARGS...]\n"
          "IDENTITY: [--user UID] [--group GID] [--groups GID,...] [--capabilities HEX] [--no-new-privs]\n"
          "          [--oom-score-adj N]\n");
  exit(2);
}

static void rfc3339(char *out, const struct timespec *ts);

/* A line in DIR/monitor.err (after its time); the only place the monitor can say anything (its stderr is /dev/null). */
static void diag(const char *fmt, ...) {
  char line[512];
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  rfc3339(line, &now);
  line[TS_LEN] = ' ';
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line + TS_LEN + 1, sizeof line - TS_LEN - 2, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  n += TS_LEN + 1;
  if ((size_t)n > sizeof line - 2) n = sizeof line - 2;
  line[n++] = '\n';
  if (write(err_fd >= 0 ? err_fd : 2, line, n) < 0) {
    /* Nowhere left to say it. */
  }
}

static unsigned long long number_in_base(const char *option, const char *value, unsigned long long min, int base) {
  char *end;
  errno = 0;
  unsigned long long n = strtoull(value, &end, base);
  if (errno || !*value || *value == '-' || *value == '+' || *value == ' ' || *end || n < min) {
    dprintf(2, "minikubelet-monitor: %s wants a number >= %llu, not '%s'\n", option, min, value);
    usage(NULL);
  }
  return n;
}

static unsigned long long number(const char *option, const char *value, unsigned long long min) {
  return number_in_base(option, value, min, 10);
}

/* A uid or gid: 32 bits, of which (uid_t)-1 means "unchanged" to the kernel, so it is refused. */
static long long id_number(const char *option, const char *value) {
  unsigned long long n = number(option, value, 0);
  if (n >= 0xffffffffULL) {
    dprintf(2, "minikubelet-monitor: %s wants an id below 4294967295, not '%s'\n", option, value);
    usage(NULL);
  }
  return (long long)n;
}

static void parse_groups(const char *value) {
  n_groups = 0;
  if (!*value) return;
  char one[24];
  for (const char *at = value;;) {
    const char *comma = strchr(at, ',');
    size_t len = comma ? (size_t)(comma - at) : strlen(at);
    if (len == 0 || len >= sizeof one) usage("--groups wants GID,GID,...");
    if (n_groups == MAX_GROUPS) usage("too many --groups");
    memcpy(one, at, len);
    one[len] = 0;
    run_groups[n_groups++] = (gid_t)id_number("--groups", one);
    if (!comma) return;
    at = comma + 1;
  }
}

static void parse_args(int argc, char **argv) {
  int i = 1;
  while (i < argc) {
    const char *option = argv[i++];
    if (strcmp(option, "--") == 0) {
      i--;
      break;
    }
    /* The options that are flags, then those taking two values, then those taking one. */
    if (strcmp(option, "--stdin") == 0) stdin_mode = 1;
    else if (strcmp(option, "--stdin-once") == 0) stdin_once = 1;
    else if (strcmp(option, "--tty") == 0) tty_mode = 1;
    else if (strcmp(option, "--read-only-root") == 0) read_only_root = 1;
    else if (strcmp(option, "--no-new-privs") == 0) no_new_privs = 1;
    else if (strcmp(option, "--bind") == 0 || strcmp(option, "--bind-ro") == 0) {
      if (i + 1 >= argc) {
        dprintf(2, "minikubelet-monitor: %s wants SRC and DST\n", option);
        usage(NULL);
      }
      if (n_binds == MAX_BINDS) usage("too many --bind");
      binds[n_binds++] = (struct bind){argv[i], argv[i + 1], option[6] == '-'};
      i += 2;
    } else {
      if (i >= argc) {
        dprintf(2, "minikubelet-monitor: %s wants a value\n", option);
        usage(NULL);
      }
      const char *value = argv[i++];
      if (strcmp(option, "--dir") == 0) dir = value;
      else if (strcmp(option, "--events") == 0) events = value;
      else if (strcmp(option, "--id") == 0) id = value;
      else if (strcmp(option, "--log") == 0) log_path = value;
      else if (strcmp(option, "--log-max-bytes") == 0) max_bytes = number(option, value, 1);
      else if (strcmp(option, "--log-max-files") == 0) max_files = number(option, value, 1);
      else if (strcmp(option, "--gzip") == 0) gzip_path = value;
      else if (strcmp(option, "--drain-ms") == 0) drain_ms = number(option, value, 0);
      else if (strcmp(option, "--attach-socket") == 0) attach_path = value;
      else if (strcmp(option, "--hostname") == 0) hostname = value;
      else if (strcmp(option, "--enter") == 0) enter_pid = (number(option, value, 1), value);
      else if (strcmp(option, "--wd") == 0) enter_wd = value;
      else if (strcmp(option, "--user") == 0) run_uid = id_number(option, value);
      else if (strcmp(option, "--group") == 0) run_gid = id_number(option, value);
      else if (strcmp(option, "--groups") == 0) parse_groups(value);
      else if (strcmp(option, "--oom-score-adj") == 0) {
        char *end;
        long n = strtol(value, &end, 10);
        if (!*value || *end || n < -1000 || n > 1000) usage("--oom-score-adj wants -1000..1000");
        oom_score_adj = value;
      }
      else if (strcmp(option, "--capabilities") == 0) {
        caps_keep = number_in_base(option, value, 0, 16);
        caps_given = 1;
      }
      else if (strcmp(option, "--cgroup-join") == 0) {
        if (n_cgroups == MAX_CGROUPS) usage("too many --cgroup-join");
        cgroup_join[n_cgroups++] = value;
      } else {
        dprintf(2, "minikubelet-monitor: unknown option '%s'\n", option);
        usage(NULL);
      }
    }
  }
  if (i >= argc) usage("no '--' before the command");
  if (i + 1 >= argc) usage("no command after '--'");
  command = argv + i + 1;
  if (enter_pid) {
    if (!enter_wd) usage("--enter wants --wd");
    return;
  }
  if (!dir) usage("--dir is required");
  if (!events) usage("--events is required");
  if (!id) usage("--id is required");
  if (!log_path) usage("--log is required");
  if (!max_bytes) usage("--log-max-bytes is required");
  if (!max_files) usage("--log-max-files is required");
}

static char *join_path(const char *a, const char *b, const char *c) {
  char *out = path_arena + arena_used;
  int n = snprintf(out, sizeof path_arena - arena_used, "%s/%s%s", a, b, c);
  if (n < 0 || (size_t)n >= sizeof path_arena - arena_used) usage("the paths are too long");
  arena_used += (size_t)n + 1;
  return out;
}

static void set_paths(void) {
  pid_path = join_path(dir, "pid", "");
  ended_path = join_path(dir, ".ended", "");
  exit_path = join_path(dir, "exit", "");
  exit_code_path = join_path(dir, "exit-code", "");
  err_path = join_path(dir, "monitor.err", "");
  started_path = join_path(events, id, ".started");
  exited_path = join_path(events, id, ".exited");
  const char *slash = strrchr(log_path, '/');
  if (!slash) {
    log_dir = join_path(".", "", "");
    log_dir[1] = 0;
    log_base = log_path;
  } else {
    log_dir = join_path(log_path, "", "");
    log_dir[slash == log_path ? 1 : slash - log_path] = 0;
    log_base = slash + 1;
  }
  log_base_len = strlen(log_base);
  /* Beside the log, so the rotation's rename never crosses filesystems (DIR may be a tmpfs). */
  new_log_path = join_path(log_dir, ".log.new", "");
  if (strlen(log_path) + 40 >= PATH_BYTES) usage("a path is too long");
}

/* /proc/<pid>/stat field 22 (clock ticks since boot), into out; counted from after comm's ") ". */
static int start_ticks(const char *stat_path, char *out, size_t size) {
  char buf[1024];
  int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *p = NULL;
  for (char *q = buf; (q = strstr(q, ") ")); q++) p = q;
  if (!p) return -1;
  p += 2;
  for (int field = 0; field < 19; field++) {
    p = strchr(p, ' ');
    if (!p) return -1;
    p++;
  }
  size_t len = strcspn(p, " \n");
  if (len == 0 || len >= size) return -1;
  memcpy(out, p, len);
  out[len] = 0;
  return 0;
}

/* A new (or emptied) file holding `text`, by one write: the contract of pid, .ended and exit. */
static int write_small(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  size_t len = strlen(text);
  ssize_t n = write(fd, text, len);
  int saved = errno;
  close(fd);
  errno = saved;
  if (n != (ssize_t)len) {
    if (n >= 0) errno = ENOSPC;
    return -1;
  }
  return 0;
}

static int touch(const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  close(fd);
  return 0;
}

static uint64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void digits(char *out, unsigned long value, int width) {
  for (int i = width - 1; i >= 0; i--) {
    out[i] = (char)('0' + value % 10);
    value /= 10;
  }
}

/* "2026-12-02T14:05:01.123456789Z" (TS_LEN bytes, no terminator): UTC, nanoseconds, as the CRI log. */
static void rfc3339(char *out, const struct timespec *ts) {
  struct tm tm;
  time_t secs = ts->tv_sec;
  gmtime_r(&secs, &tm);
  digits(out, (unsigned long)tm.tm_year + 1900, 4);
  out[4] = '-';
  digits(out + 5, (unsigned long)tm.tm_mon + 1, 2);
  out[7] = '-';
  digits(out + 8, (unsigned long)tm.tm_mday, 2);
  out[10] = 'T';
  digits(out + 11, (unsigned long)tm.tm_hour, 2);
  out[13] = ':';
  digits(out + 14, (unsigned long)tm.tm_min, 2);
  out[16] = ':';
  digits(out + 17, (unsigned long)tm.tm_sec, 2);
  out[19] = '.';
  digits(out + 20, (unsigned long)ts->tv_nsec, 9);
  out[29] = 'Z';
}

/* ---- the log: rotation and full disk ---------------------------------------------------------- */

static int log_fd = -1;
static unsigned long long log_size;
/* Output that could not be written (a full disk), said by one record once there is room again. */
static unsigned long long lost;
static int gzip_running;

static int open_log(void) {
  int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return -1;
  struct stat st;
  log_size = fstat(fd, &st) == 0 ? (unsigned long long)st.st_size : 0;
  log_fd = fd;
  return 0;
}

struct dirent64 {
  uint64_t d_ino;
  int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/* A rotated log: LOGFILE.<digit>... (LOGFILE.YYYYMMDD-HHMMSS.NNNNNNNNN, maybe .gz). */
static int is_rotated(const char *name) {
  return strncmp(name, log_base, log_base_len) == 0 && name[log_base_len] == '.' && name[log_base_len + 1] >= '0' &&
         name[log_base_len + 1] <= '9';
}

/*
 * F.gz while F is still there is a gzip at work on F: the two are one rotated file, named by F
 * (which sorts first), and removed together.
 */
static int being_compressed(int dir_fd, const char *name) {
  size_t len = strlen(name);
  char twin[256];
  if (len < 4 || len >= sizeof twin || strcmp(name + len - 3, ".gz") != 0) return 0;
  memcpy(twin, name, len - 3);
  twin[len - 3] = 0;
  return faccessat(dir_fd, twin, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/*
 * Walks the rotated logs without opendir (which allocates): counts them, and copies the smallest
 * name into `oldest` (by name is by time). Calls `each` for every one when given.
 */
static int scan_rotated(int dir_fd, char *oldest, void (*each)(const char *name)) {
  char buf[2048];
  int count = 0;
  if (oldest) oldest[0] = 0;
  if (lseek(dir_fd, 0, SEEK_SET) < 0) return -1;
  for (;;) {
    long n = syscall(SYS_getdents64, dir_fd, buf, sizeof buf);
    if (n < 0) return -1;
    if (n == 0) break;
    for (long off = 0; off < n;) {
      struct dirent64 *entry = (struct dirent64 *)(buf + off);
      off += entry->d_reclen;
      if (!is_rotated(entry->d_name) || being_compressed(dir_fd, entry->d_name)) continue;
      count++;
      if (oldest && (oldest[0] == 0 || strcmp(entry->d_name, oldest) < 0) && strlen(entry->d_name) < 256) strcpy(oldest, entry->d_name);
      if (each) each(entry->d_name);
    }
  }
  return count;
}

static void reset_signals(void) {
  sigset_t none;
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
}

static int gzip_deferred;
/* The newest rotated log, which stays plain (the kubelet compresses all but it): found by keep_newest. */
static char newest_rotated[256];

static void keep_newest(const char *name) {
  if (strcmp(name, newest_rotated) > 0 && strlen(name) < sizeof newest_rotated) strcpy(newest_rotated, name);
}

static void gzip_one(const char *name);

static void gzip_unless_newest(const char *name) {
  if (strcmp(name, newest_rotated) != 0) gzip_one(name);
}

/* The compression a rotation could not start while a gzip ran: every rotated log but the newest. */
static void compress_deferred(void) {
  int dir_fd = open(log_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return;
  gzip_deferred = 0;
  newest_rotated[0] = 0;
  scan_rotated(dir_fd, NULL, keep_newest);
  scan_rotated(dir_fd, NULL, gzip_unless_newest);
  close(dir_fd);
}

static void gzip_one(const char *name) {
  size_t len = strlen(name);
  if (len > 3 && strcmp(name + len - 3, ".gz") == 0) return;
  char path[PATH_BYTES];
  if (snprintf(path, sizeof path, "%s/%s", log_dir, name) >= (int)sizeof path) return;
  pid_t pid = fork();
  if (pid == 0) {
    reset_signals();
    char *argv[] = {(char *)gzip_path, "-f", path, NULL};
    execv(gzip_path, argv);
    _exit(127);
  }
  if (pid > 0) gzip_running++;
  else diag("fork for %s: %s", gzip_path, strerror(errno));
}

/*
 * The kubelet's rotation, without a signal or a race: rotated logs beyond max-files-2 go (oldest
 * first), the others are compressed, and LOGFILE is linked to LOGFILE.TIMESTAMP then replaced by
 * a new empty file in one rename, so a reader always finds a LOGFILE. Undone when it cannot be
 * made (no room for the link or the new file): the caller then drops the record like a failed write.
 */
static int rotate(void) {
  int dir_fd = open(log_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    diag("rotate: open %s: %s", log_dir, strerror(errno));
    return -1;
  }
  unsigned long long keep = max_files >= 2 ? max_files - 2 : 0;
  char oldest[256];
  int count;
  while ((count = scan_rotated(dir_fd, oldest, NULL)) > 0 && (unsigned long long)count > keep) {
    if (unlinkat(dir_fd, oldest, 0) < 0 && errno != ENOENT) {
      diag("rotate: remove %s: %s", oldest, strerror(errno));
      break;
    }
    /* A gzip on it has its output as good as gone too: it would stay as a file past the count. */
    size_t len = strlen(oldest);
    if (len + 3 < sizeof oldest) {
      memcpy(oldest + len, ".gz", 4);
      unlinkat(dir_fd, oldest, 0);
    }
  }
  /* A gzip still at work on a file would race a second one on it: the pass waits for it to end. */
  if (gzip_path && gzip_running == 0) scan_rotated(dir_fd, NULL, gzip_one);
  else if (gzip_path) gzip_deferred = 1;
  close(dir_fd);

  char rotated[PATH_BYTES];
  rotated[0] = 0;
  if (max_files >= 2) {
    for (int attempt = 0;; attempt++) {
      struct timespec ts;
      struct tm tm;
      clock_gettime(CLOCK_REALTIME, &ts);
      gmtime_r(&ts.tv_sec, &tm);
      snprintf(rotated, sizeof rotated, "%s.%04d%02d%02d-%02d%02d%02d.%09ld", log_path, tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
               tm.tm_hour, tm.tm_min, tm.tm_sec, (long)ts.tv_nsec);
      if (link(log_path, rotated) == 0) break;
      if (errno == EEXIST && attempt < 3) continue;
      diag("rotate: link %s: %s", rotated, strerror(errno));
      return -1;
    }
  }
  int fd = open(new_log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0 || rename(new_log_path, log_path) < 0) {
    diag("rotate: a new %s: %s", log_path, strerror(errno));
    if (fd >= 0) {
      close(fd);
      unlink(new_log_path);
    }
    if (rotated[0]) unlink(rotated);
    return -1;
  }
  if (log_fd >= 0) close(log_fd);
  log_fd = fd;
  log_size = 0;
  return 0;
}

/* One record into the log by one write, rotating first if it would go past max-bytes. 0: written. */
static int log_write(const char *record, size_t len) {
  if (log_fd < 0 && open_log() < 0) return -1;
  if (log_size > 0 && log_size + len > max_bytes && rotate() < 0) return -1;
  ssize_t n = write(log_fd, record, len);
  if (n == (ssize_t)len) {
    log_size += len;
    return 0;
  }
  /* No partial record: cut what landed of it. */
  if (n > 0 && ftruncate(log_fd, (off_t)log_size) < 0) {
    struct stat st;
    if (fstat(log_fd, &st) == 0) log_size = (unsigned long long)st.st_size;
  }
  return -1;
}

/* The record saying how much was dropped; the first that lands means there is room again. */
static int write_lost_notice(void) {
  char record[256];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  rfc3339(record, &ts);
  int n = snprintf(record + TS_LEN, sizeof record - TS_LEN,
                   " stderr F [minikubelet] container output dropped: the log could not be written (no space left on device?); at least "
                   "%llu bytes lost\n",
                   lost);
  if (log_write(record, TS_LEN + (size_t)n) < 0) return -1;
  lost = 0;
  return 0;
}

/*
 * Records go out in batches: whole records only, as many as one read of a pipe made (a flood of
 * short lines would otherwise be a write per line), each batch by one write, never past max-bytes,
 * and flushed before the loop waits again, so nothing is held back. A batch that cannot be written
 * is dropped and counted: never waited for, so a full disk cannot hold the container.
 */
static char batch[HDR + LINE_BYTES + 1];
static size_t batch_len;
static unsigned long long batch_payload;

static void flush(void) {
  if (batch_len == 0) return;
  if (lost > 0 && write_lost_notice() < 0) {
    lost += batch_payload;
  } else if (log_write(batch, batch_len) < 0) {
    if (lost == 0) diag("log %s could not be written (%s): dropping output", log_path, strerror(errno));
    lost += batch_payload;
  }
  batch_len = 0;
  batch_payload = 0;
}

/* ---- attach: the socket, its clients, the container's stdin ------------------------------------ */

enum { F_STDIN = 0, F_CLOSE_STDIN = 1, F_RESIZE = 2, F_HELLO = 3 };
enum { F_STDOUT = 1, F_STDERR = 2, F_EXIT = 3 };
#define MAX_CLIENTS 16
/* A client further behind than this is dropped: an attach must never hold the container or the log. */
#define CLIENT_QUEUE (64 << 10)
#define STDIN_QUEUE (64 << 10)
#define READ_CHUNK 4096
/* How long an attach has after EXIT to take what is queued for it before the monitor exits. */
#define CLIENT_LINGER_MS 1000

/* In .bss: a client's queue is memory only once it is used. */
static struct client {
  int fd;
  char said_hello, feeds, ending; /* ending: EXIT is queued, closed once it is out */
  unsigned char header[5];
  int header_have;
  uint32_t payload_left;
  unsigned char small[4]; /* HELLO's and RESIZE's payload */
  uint32_t small_have;
  size_t start, end;
  char queue[CLIENT_QUEUE];
} clients[MAX_CLIENTS];
/* MAX_CLIENTS with an attach socket, else 0: the slots the loops look at. */
static int client_slots;
static int listen_fd = -1;
/* The container's stdin (the pipe's write end, or a dup of the pty master): -1 once closed. */
static int in_fd = -1;
static int stdin_open, stdin_close_pending;
static struct client *once_owner; /* the first attach that fed stdin, under --stdin-once */
static int once_owner_seen;
static size_t in_start, in_end;
static char in_queue[STDIN_QUEUE];

static void drop_client(struct client *c) {
  if (c->fd < 0) return;
  close(c->fd);
  c->fd = -1;
  c->start = c->end = 0;
}

static void close_stdin_now(void) {
  if (tty_mode) return;
  if (in_fd >= 0) close(in_fd);
  in_fd = -1;
  stdin_open = stdin_close_pending = 0;
  in_start = in_end = 0;
}

/* stdin-once's close: after what is queued for the container has gone in. */
static void close_stdin_soon(void) {
  if (!stdin_open) return;
  stdin_open = 0;
  stdin_close_pending = 1;
  if (in_start == in_end) close_stdin_now();
}

/* A client gone (or detached): under stdin-once its going closes the container's stdin. */
static void client_left(struct client *c) {
  if (c == once_owner) {
    once_owner = NULL;
    if (stdin_once && !tty_mode) close_stdin_soon();
  }
  drop_client(c);
}

static void queue_frame(struct client *c, int type, const char *data, size_t len) {
  if (c->fd < 0 || c->ending) return;
  if (CLIENT_QUEUE - (c->end - c->start) < len + 5) {
    client_left(c);
    return;
  }
  if (CLIENT_QUEUE - c->end < len + 5) {
    memmove(c->queue, c->queue + c->start, c->end - c->start);
    c->end -= c->start;
    c->start = 0;
  }
  unsigned char *h = (unsigned char *)c->queue + c->end;
  h[0] = (unsigned char)type;
  h[1] = (unsigned char)(len >> 24);
  h[2] = (unsigned char)(len >> 16);
  h[3] = (unsigned char)(len >> 8);
  h[4] = (unsigned char)len;
  memcpy(c->queue + c->end + 5, data, len);
  c->end += len + 5;
}

static void write_client(struct client *c) {
  while (c->fd >= 0 && c->start < c->end) {
    ssize_t n = write(c->fd, c->queue + c->start, c->end - c->start);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) client_left(c);
      return;
    }
    c->start += (size_t)n;
  }
  if (c->fd >= 0 && c->start == c->end) {
    c->start = c->end = 0;
    if (c->ending) drop_client(c);
  }
}

/* What the container wrote, to every attach (the log has its own copy). */
static void broadcast(int type, const char *data, size_t len) {
  for (int i = 0; i < client_slots; i++) {
    if (clients[i].fd < 0) continue;
    queue_frame(&clients[i], type, data, len);
    write_client(&clients[i]);
  }
}

static void write_stdin(void) {
  while (in_fd >= 0 && in_start < in_end) {
    ssize_t n = write(in_fd, in_queue + in_start, in_end - in_start);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return;
      /* The container closed its stdin (EPIPE): what it will not read is dropped. */
      if (!tty_mode) close_stdin_now();
      else in_start = in_end = 0;
      return;
    }
    in_start += (size_t)n;
  }
  if (in_start == in_end) {
    in_start = in_end = 0;
    if (stdin_close_pending) close_stdin_now();
  } else if (in_start > 0) {
    memmove(in_queue, in_queue + in_start, in_end - in_start);
    in_end -= in_start;
    in_start = 0;
  }
}

/* One whole frame header and payload read: what it asks. 0: the client stays. */
static int frame_done(struct client *c) {
  int type = c->header[0];
  if (type == F_HELLO) {
    c->said_hello = 1;
    c->feeds = c->small[0] == 1;
    if (c->feeds && stdin_once && !once_owner_seen) {
      once_owner_seen = 1;
      once_owner = c;
    }
  } else if (type == F_CLOSE_STDIN) {
    if (c == once_owner && stdin_once && !tty_mode) {
      once_owner = NULL;
      close_stdin_soon();
    } else {
      return -1; /* a detach */
    }
  } else if (type == F_RESIZE && tty_mode && in_fd >= 0) {
    struct winsize size = {.ws_col = (unsigned short)(c->small[0] << 8 | c->small[1]),
                           .ws_row = (unsigned short)(c->small[2] << 8 | c->small[3])};
    if (ioctl(in_fd, TIOCSWINSZ, &size) < 0) diag("resize the terminal: %s", strerror(errno));
  }
  return 0;
}

static void read_client(struct client *c) {
  unsigned char buf[READ_CHUNK];
  size_t room = c->feeds && stdin_open ? STDIN_QUEUE - in_end : sizeof buf;
  if (room == 0) return;
  ssize_t n = read(c->fd, buf, room < sizeof buf ? room : sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    client_left(c);
    return;
  }
  for (ssize_t at = 0; at < n;) {
    if (c->header_have < 5) {
      c->header[c->header_have++] = buf[at++];
      if (c->header_have < 5) continue;
      int type = c->header[0];
      uint32_t len = (uint32_t)c->header[1] << 24 | (uint32_t)c->header[2] << 16 | (uint32_t)c->header[3] << 8 | c->header[4];
      /* HELLO first; a frame that is not one of ours, or too long for what it is, ends the attach. */
      int bad = type > F_HELLO || (!c->said_hello && type != F_HELLO) || (type == F_HELLO && len != 1) || (type == F_RESIZE && len != 4) ||
                (type == F_CLOSE_STDIN && len != 0);
      if (bad) {
        client_left(c);
        return;
      }
      c->payload_left = len;
      c->small_have = 0;
    } else {
      size_t take = (size_t)(n - at) < c->payload_left ? (size_t)(n - at) : c->payload_left;
      if (c->header[0] == F_STDIN) {
        /* Room for a whole chunk was there when the socket was polled for reading. */
        if (c->feeds && stdin_open && in_fd >= 0 && in_end + take <= STDIN_QUEUE) {
          memcpy(in_queue + in_end, buf + at, take);
          in_end += take;
        }
      } else {
        memcpy(c->small + c->small_have, buf + at, take);
        c->small_have += (uint32_t)take;
      }
      at += (ssize_t)take;
      c->payload_left -= (uint32_t)take;
    }
    if (c->header_have == 5 && c->payload_left == 0) {
      c->header_have = 0;
      if (frame_done(c) < 0) {
        client_left(c);
        return;
      }
    }
  }
  write_stdin();
}

static void accept_clients(void) {
  for (;;) {
    int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    struct client *c = NULL;
    for (int i = 0; i < client_slots && !c; i++)
      if (clients[i].fd < 0) c = &clients[i];
    if (!c) {
      close(fd);
      continue;
    }
    c->fd = fd;
    c->said_hello = c->feeds = c->ending = 0;
    c->header_have = 0;
    c->payload_left = c->small_have = 0;
    c->start = c->end = 0;
  }
}

/* Listening before the container starts, so an attach made at once finds it; the backlog is more
 * than MAX_CLIENTS so attaches made at once are all accepted (and the extra ones closed), not refused. */
static int open_attach_socket(void) {
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if (strlen(attach_path) < sizeof addr.sun_path) {
    strcpy(addr.sun_path, attach_path);
  } else {
    /* A runtime root deep in the tree makes a path past sun_path's 108 bytes: the socket is bound
     * through its directory's descriptor instead (the agent connects the same way). */
    const char *slash = strrchr(attach_path, '/');
    char parent[PATH_BYTES];
    size_t len = slash ? (size_t)(slash - attach_path) : 0;
    if (!slash || len >= sizeof parent) {
      errno = ENAMETOOLONG;
      return -1;
    }
    memcpy(parent, attach_path, len);
    parent[len] = 0;
    int dir_fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return -1;
    int n = snprintf(addr.sun_path, sizeof addr.sun_path, "/proc/self/fd/%d/%s", dir_fd, slash + 1);
    if (n < 0 || (size_t)n >= sizeof addr.sun_path) {
      errno = ENAMETOOLONG;
      return -1;
    }
  }
  listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd < 0) return -1;
  unlink(attach_path);
  if (bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) < 0 || chmod(attach_path, 0600) < 0 || listen(listen_fd, 64) < 0)
    return -1;
  return 0;
}

static void close_attach_socket(void) {
  if (listen_fd < 0) return;
  close(listen_fd);
  listen_fd = -1;
  unlink(attach_path);
}

/* The end: EXIT to every attach, then each is closed once it has it (or when the monitor exits). */
static void send_exit(const char *code_line) {
  close_attach_socket();
  size_t len = strcspn(code_line, " ");
  for (int i = 0; i < client_slots; i++) {
    if (clients[i].fd < 0) continue;
    queue_frame(&clients[i], F_EXIT, code_line, len);
    clients[i].ending = 1;
    write_client(&clients[i]);
  }
  if (in_fd >= 0) close(in_fd);
  in_fd = -1;
  stdin_open = 0;
}

static int clients_ending(void) {
  for (int i = 0; i < client_slots; i++)
    if (clients[i].fd >= 0) return 1;
  return 0;
}

/* ---- the streams ------------------------------------------------------------------------------ */

struct stream {
  int fd;
  const char *name;
  size_t have; /* the line so far, at buf */
  struct timespec read_at;
  char buf[LINE_BYTES];
};
/* In .bss, initialised in main: an initialiser would put both 16 KiB buffers in the binary's data. */
static struct stream out, err;

/*
 * Appends `content` (len bytes) to the batch as records tagged `tag` (F or P). A record bigger
 * than the log may hold is cut into P chunks that fit; a rotation may come between two records.
 */
static void emit(struct stream *s, const char *content, size_t len, char tag) {
  size_t room = max_bytes > HDR + 1 ? max_bytes - HDR - 1 : 1;
  for (;;) {
    size_t take = len > room ? room : len;
    char record_tag = take < len ? 'P' : tag;
    size_t record_len = HDR + take + 1;
    if (batch_len + record_len > sizeof batch || (batch_len > 0 && log_size + batch_len + record_len > max_bytes)) flush();
    char *record = batch + batch_len;
    rfc3339(record, &s->read_at);
    record[TS_LEN] = ' ';
    memcpy(record + TS_LEN + 1, s->name, 6);
    record[TS_LEN + 7] = ' ';
    record[TS_LEN + 8] = record_tag;
    record[TS_LEN + 9] = ' ';
    memcpy(record + HDR, content, take);
    record[HDR + take] = '\n';
    batch_len += record_len;
    batch_payload += take + (record_tag == 'F');
    if (take == len) return;
    content += take;
    len -= take;
  }
}

/* A last line without its newline is written as partial, as containerd's log redirect does: a reader
 * then serves it without a newline it never had (kubectl logs shows `printf x` as `x`). */
static void close_stream(struct stream *s) {
  if (s->have > 0) {
    emit(s, s->buf, s->have, 'P');
    s->have = 0;
  }
  flush();
  if (s->fd >= 0) close(s->fd);
  s->fd = -1;
}

/* One read of the stream, straight into its line buffer; every full line read goes out as F. */
static void read_stream(struct stream *s) {
  ssize_t n = read(s->fd, s->buf + s->have, LINE_BYTES - s->have);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  clock_gettime(CLOCK_REALTIME, &s->read_at);
  if (n <= 0) {
    close_stream(s);
    return;
  }
  broadcast(s == &out ? F_STDOUT : F_STDERR, s->buf + s->have, (size_t)n);
  char *start = s->buf, *scan = s->buf + s->have, *end = scan + n;
  char *newline;
  while ((newline = memchr(scan, '\n', (size_t)(end - scan)))) {
    emit(s, start, (size_t)(newline - start), 'F');
    start = scan = newline + 1;
  }
  size_t rest = (size_t)(end - start);
  if (rest == LINE_BYTES) {
    emit(s, start, rest, 'P');
    rest = 0;
  } else if (start != s->buf && rest > 0) {
    memmove(s->buf, start, rest);
  }
  s->have = rest;
  flush();
}

/* ---- the container's process ------------------------------------------------------------------ */

/* What the child could not record before its exec: the parent retries it. One write, one read. */
struct child_report {
  char pid_failed, started_failed;
  char pid_line[126];
};

/* `0` is the writer itself. Written to a v1 `tasks` file it moves only this thread (the child is
 * single-threaded, so all of it), which the kernel does without the global threadgroup lock whose
 * RCU wait a pid, or a whole process, costs on every start. */
static void write_all_cgroups(void) {
  for (int i = 0; i < n_cgroups; i++) {
    int fd = open(cgroup_join[i], O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, "0\n", 2) != 2) diag("join %s: %s", cgroup_join[i], strerror(errno));
    if (fd >= 0) close(fd);
  }
}

/* Remounts the mount at `path` read-only, keeping the flags it has (nosuid, nodev...): a remount
 * that drops one is refused (EPERM). Only that mount, not those on it. */
COLD static int remount_read_only(const char *path) {
  struct statvfs st;
  unsigned long keep = 0;
  if (statvfs(path, &st) == 0) {
    if (st.f_flag & ST_NOSUID) keep |= MS_NOSUID;
    if (st.f_flag & ST_NODEV) keep |= MS_NODEV;
    if (st.f_flag & ST_NOEXEC) keep |= MS_NOEXEC;
    if (st.f_flag & ST_NOATIME) keep |= MS_NOATIME;
    if (st.f_flag & ST_NODIRATIME) keep |= MS_NODIRATIME;
    if (st.f_flag & ST_RELATIME) keep |= MS_RELATIME;
  }
  return mount(NULL, path, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | keep, NULL);
}

/*
 * The volumes at their mountPath, in the container's own mount namespace; made private first so
 * no mount goes back to the host's. The root read-only last, so the binds could still be made on
 * it. Whatever fails is 126, as an exec that cannot be.
 */
COLD static void make_mounts(void) {
  if (n_binds == 0 && !read_only_root) return;
  if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
    diag("a private mount namespace: %s", strerror(errno));
    _exit(126);
  }
  for (int i = 0; i < n_binds; i++) {
    const struct bind *b = &binds[i];
    if (mount(b->src, b->dst, NULL, MS_BIND | MS_REC, NULL) < 0) {
      diag("bind %s at %s: %s", b->src, b->dst, strerror(errno));
      _exit(126);
    }
    if (b->read_only && remount_read_only(b->dst) < 0) {
      diag("bind %s at %s read-only: %s", b->src, b->dst, strerror(errno));
      _exit(126);
    }
  }
  if (read_only_root && remount_read_only("/") < 0) {
    diag("the root read-only: %s", strerror(errno));
    _exit(126);
  }
}

/* The pod's hostname, in a UTS namespace of the container's own. */
COLD static void make_hostname(void) {
  if (!hostname) return;
  if (unshare(CLONE_NEWUTS) < 0 || sethostname(hostname, strlen(hostname)) < 0) {
    diag("the hostname %s: %s", hostname, strerror(errno));
    _exit(126);
  }
}

/* The capability sets' layout (linux/capability.h, version 3: two 32-bit words), which musl's headers lack. */
struct cap_header {
  uint32_t version;
  int pid;
};
struct cap_data {
  uint32_t effective, permitted, inheritable;
};
#define CAP_VERSION_3 0x20080522

/*
 * The bounding set cut to caps_keep, and nothing inheritable or ambient, so what the exec gives is
 * that set for root and nothing for another user. Done while the capabilities to do it (SETPCAP,
 * SETUID, SETGID) are still effective: the bounding set only limits what an exec grants.
 */
COLD static int limit_capabilities(void) {
  for (int cap = 0; cap < 64 && prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++) {
    if ((caps_keep >> cap) & 1) continue;
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) return -1;
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL) return -1;
  struct cap_header header = {CAP_VERSION_3, 0};
  struct cap_data data[2];
  if (syscall(SYS_capget, &header, data) < 0) return -1;
  data[0].inheritable = data[1].inheritable = 0;
  return (int)syscall(SYS_capset, &header, data);
}

/*
 * IDENTITY, in the order the kernel allows it: capabilities, groups, group, user, then
 * no_new_privs. The raw system calls: libc's wrappers would make every thread take the change
 * (there is one), and that machinery is a page of the binary each monitor maps.
 */
COLD static void take_identity(void) {
  /* First: a lower score needs CAP_SYS_RESOURCE, which the capabilities below may drop. */
  if (oom_score_adj && write_small("/proc/self/oom_score_adj", oom_score_adj) < 0) diag("oom_score_adj %s: %s", oom_score_adj, strerror(errno));
  const char *step = NULL;
  if (caps_given && limit_capabilities() < 0) step = "limit the capabilities";
  else if (n_groups >= 0 && syscall(SYS_setgroups, n_groups, run_groups) < 0) step = "set the supplementary groups";
  else if (run_gid >= 0 && syscall(SYS_setresgid, run_gid, run_gid, run_gid) < 0) step = "set the group";
  else if (run_uid >= 0 && syscall(SYS_setresuid, run_uid, run_uid, run_uid) < 0) step = "set the user";
  else if (no_new_privs && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) step = "set no_new_privs";
  if (!step) return;
  diag("%s: %s", step, strerror(errno));
  _exit(126);
}

/*
 * --enter: an exec in a running container. Each namespace of the container's that is not already
 * ours is joined; the directory is changed to after the mount namespace, where DIR is the
 * container's. Every failure is said on stderr (the exec's) and is 126.
 */
COLD static void enter_container(void) {
  static const char *const kinds[] = {"ipc", "uts", "mnt"};
  int fds[3];
  char path[64];
  for (int i = 0; i < 3; i++) {
    struct stat theirs, ours;
    snprintf(path, sizeof path, "/proc/%s/ns/%s", enter_pid, kinds[i]);
    fds[i] = open(path, O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0 || fstat(fds[i], &theirs) < 0) {
      diag("enter %s: %s", path, strerror(errno));
      _exit(126);
    }
    snprintf(path, sizeof path, "/proc/self/ns/%s", kinds[i]);
    if (stat(path, &ours) == 0 && ours.st_ino == theirs.st_ino && ours.st_dev == theirs.st_dev) {
      close(fds[i]);
      fds[i] = -1;
    }
  }
  for (int i = 0; i < 3; i++) {
    if (fds[i] >= 0 && setns(fds[i], 0) < 0) {
      diag("enter the %s namespace of %s: %s", kinds[i], enter_pid, strerror(errno));
      _exit(126);
    }
  }
  if (chdir(enter_wd) < 0) {
    diag("chdir %s: %s", enter_wd, strerror(errno));
    _exit(126);
  }
  take_identity();
  execvp(command[0], command);
  int failure = errno;
  diag("exec %s: %s", command[0], strerror(failure));
  _exit(failure == ENOENT ? 127 : 126);
}

static char pts_name[64];

/* The terminal's slave as stdin, stdout, stderr and the controlling terminal of the new session. */
COLD static void take_terminal(void) {
  int fd = open(pts_name, O_RDWR);
  if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) < 0) {
    diag("the terminal %s: %s", pts_name, strerror(errno));
    _exit(126);
  }
  for (int i = 0; i <= 2; i++) dup2(fd, i);
  if (fd > 2) close(fd);
}

COLD static void run_child(int out_w, int err_w, int in_r, int report_w, mode_t umask_was, const char *monitor_ids) {
  struct child_report report;
  memset(&report, 0, sizeof report);
  setsid();
  /* Joined before the exec, so nothing the command allocates escapes its limits. */
  write_all_cgroups();
  char ticks[32];
  if (start_ticks("/proc/self/stat", ticks, sizeof ticks) < 0) {
    diag("read /proc/self/stat: %s", strerror(errno));
    strcpy(ticks, "0");
  }
  snprintf(report.pid_line, sizeof report.pid_line, "%d %s - %s\n", (int)getpid(), ticks, monitor_ids);
  if (write_small(pid_path, report.pid_line) < 0) {
    diag("write %s: %s", pid_path, strerror(errno));
    report.pid_failed = 1;
  }
  if (touch(started_path) < 0) {
    diag("create %s: %s", started_path, strerror(errno));
    report.started_failed = 1;
  }
  if (write(report_w, &report, sizeof report) < 0) diag("report to the monitor: %s", strerror(errno));
  make_hostname();
  make_mounts();
  if (tty_mode) {
    take_terminal();
  } else {
    if (in_r >= 0) {
      dup2(in_r, 0);
    } else {
      int null_fd = open("/dev/null", O_RDONLY);
      if (null_fd >= 0 && null_fd != 0) {
        dup2(null_fd, 0);
        close(null_fd);
      }
    }
    dup2(out_w, 1);
    dup2(err_w, 2);
  }
  umask(umask_was);
  reset_signals();
  take_identity();
  execvp(command[0], command);
  int failure = errno;
  diag("exec %s: %s", command[0], strerror(failure));
  _exit(failure == ENOENT ? 127 : 126);
}

/* ---- the monitor ------------------------------------------------------------------------------ */

enum { OP_PID = 1, OP_STARTED = 2, OP_ENDED = 4, OP_EXIT = 8, OP_EXITED = 16 };

static unsigned pending;
static char pid_line[126], code_line[24], exit_code[12];
static int report_fd = -1;

/* The small files, in order; what fails is retried every RETRY_MS (they are tiny: room comes). */
static void try_pending(void) {
  if ((pending & OP_PID) && write_small(pid_path, pid_line) == 0) pending &= ~OP_PID;
  if ((pending & OP_STARTED) && touch(started_path) == 0) pending &= ~OP_STARTED;
  if ((pending & OP_ENDED) && write_small(ended_path, code_line) == 0) pending &= ~OP_ENDED;
  if ((pending & OP_EXIT) && !(pending & (OP_PID | OP_STARTED)) && report_fd < 0) {
    if (!(pending & OP_ENDED) && write_small(exit_path, code_line) == 0) pending &= ~OP_EXIT;
    else if (symlink(exit_code, exit_code_path) == 0 || errno == EEXIST) pending &= ~(OP_EXIT | OP_ENDED);
  }
  if ((pending & OP_EXITED) && !(pending & OP_EXIT) && touch(exited_path) == 0) pending &= ~OP_EXITED;
}

static void read_report(void) {
  struct child_report report;
  ssize_t n = read(report_fd, &report, sizeof report);
  if (n < 0 && errno == EINTR) return;
  if (n == (ssize_t)sizeof report) {
    memcpy(pid_line, report.pid_line, sizeof pid_line);
    pid_line[sizeof pid_line - 1] = 0;
    if (report.pid_failed) pending |= OP_PID;
    if (report.started_failed) pending |= OP_STARTED;
    return;
  }
  close(report_fd);
  report_fd = -1;
}

int main(int argc, char **argv) {
  /* Started with a standard descriptor closed, a pipe would take it, and dup2 onto itself in the
   * child would leave it close-on-exec: the container would lose its stdout. */
  for (int fd = open("/dev/null", O_RDWR); fd >= 0 && fd <= 2; fd = open("/dev/null", O_RDWR)) {
  }
  parse_args(argc, argv);
  if (enter_pid) enter_container();
  set_paths();
  mode_t umask_was = umask(077);
  err_fd = open(err_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  signal(SIGPIPE, SIG_IGN);
  sigset_t chld;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, NULL);
  int sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
  int out_pipe[2], err_pipe[2], report_pipe[2];
  if (sig_fd < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0 || pipe2(report_pipe, O_CLOEXEC) < 0) {
    diag("signalfd/pipe: %s", strerror(errno));
    return 1;
  }
  if (open_log() < 0) diag("open %s: %s (output is dropped until it can be)", log_path, strerror(errno));
  /* Each slot is a page apart: only a container with an attach socket touches them. */
  if (attach_path) {
    client_slots = MAX_CLIENTS;
    for (int i = 0; i < client_slots; i++) clients[i].fd = -1;
  }
  int in_r = -1, master = -1;
  if (tty_mode) {
    struct winsize size = {.ws_col = 80, .ws_row = 24};
    master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, pts_name, sizeof pts_name) != 0 ||
        ioctl(master, TIOCSWINSZ, &size) < 0 || fcntl(master, F_SETFL, O_NONBLOCK) < 0 || (in_fd = fcntl(master, F_DUPFD_CLOEXEC, 0)) < 0) {
      diag("a terminal: %s", strerror(errno));
      return 1;
    }
    stdin_open = stdin_mode;
  } else if (stdin_mode) {
    int in_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) < 0 || fcntl(in_pipe[1], F_SETFL, O_NONBLOCK) < 0) {
      diag("stdin pipe: %s", strerror(errno));
      return 1;
    }
    in_r = in_pipe[0];
    in_fd = in_pipe[1];
    stdin_open = 1;
  }
  if (attach_path && open_attach_socket() < 0) {
    diag("attach socket %s: %s", attach_path, strerror(errno));
    return 1;
  }

  char monitor_ids[64], ticks[32];
  if (start_ticks("/proc/self/stat", ticks, sizeof ticks) < 0) strcpy(ticks, "0");
  snprintf(monitor_ids, sizeof monitor_ids, "%d %s", (int)getpid(), ticks);

  pid_t child = fork();
  if (child < 0) {
    diag("fork: %s", strerror(errno));
    return 1;
  }
  if (child == 0) run_child(out_pipe[1], err_pipe[1], in_r, report_pipe[1], umask_was, monitor_ids);
  close(out_pipe[1]);
  close(err_pipe[1]);
  close(report_pipe[1]);
  if (in_r >= 0) close(in_r);
  out.fd = out_pipe[0];
  out.name = "stdout";
  err.fd = err_pipe[0];
  err.name = "stderr";
  if (tty_mode) {
    /* The terminal is the container's stdout and stderr at once: its output is logged as stdout. */
    close(out.fd);
    close(err.fd);
    out.fd = master;
    err.fd = -1;
  }
  report_fd = report_pipe[0];

  int ended = 0, finished = 0;
  uint64_t drain_until = 0, retry_at = 0, linger_until = 0;
  for (;;) {
    uint64_t now = mono_ms();
    if (ended && !finished && ((out.fd < 0 && err.fd < 0) || now >= drain_until)) {
      /* A process that left the group may hold a pipe open: its output past the drain is not ours. */
      close_stream(&out);
      close_stream(&err);
      finished = 1;
      pending |= OP_EXIT | OP_EXITED;
      retry_at = now;
      send_exit(code_line);
      linger_until = now + CLIENT_LINGER_MS;
    }
    /* Its directory removed (the agent removed the container without waiting for us): nothing
     * left to record, and a retry would wait forever for a directory that will not come back. */
    if (finished && pending && access(dir, F_OK) != 0 && errno == ENOENT) break;
    if ((pending || lost) && now >= retry_at) {
      try_pending();
      if (lost > 0) write_lost_notice();
      retry_at = now + RETRY_MS;
    }
    /* A compression left for when the gzip at work is done is started before the monitor goes. */
    if (finished && !pending && report_fd < 0 && !(gzip_deferred && gzip_running > 0) && (!clients_ending() || now >= linger_until)) break;

    struct pollfd fds[6 + MAX_CLIENTS] = {
        {.fd = out.fd, .events = POLLIN},
        {.fd = err.fd, .events = POLLIN},
        {.fd = sig_fd, .events = POLLIN},
        {.fd = report_fd, .events = POLLIN},
        {.fd = listen_fd, .events = POLLIN},
        {.fd = in_start < in_end ? in_fd : -1, .events = POLLOUT},
    };
    /* A client feeding stdin is not read while the container's queue has no room for a read. */
    int stdin_full = stdin_open && STDIN_QUEUE - in_end < READ_CHUNK;
    for (int i = 0; i < client_slots; i++) {
      struct client *c = &clients[i];
      int hold = c->fd >= 0 && c->feeds && stdin_full;
      fds[6 + i].fd = hold ? -1 : c->fd;
      fds[6 + i].events = (c->ending ? 0 : POLLIN) | (c->start < c->end ? POLLOUT : 0);
    }
    int timeout = -1;
    if (pending || lost) timeout = retry_at > now ? (int)(retry_at - now) : 0;
    if (ended && !finished) {
      int drain = drain_until > now ? (int)(drain_until - now) : 0;
      if (timeout < 0 || drain < timeout) timeout = drain;
    }
    if (finished && clients_ending()) {
      int linger = linger_until > now ? (int)(linger_until - now) : 0;
      if (timeout < 0 || linger < timeout) timeout = linger;
    }
    if (poll(fds, 6 + (nfds_t)client_slots, timeout) < 0) {
      if (errno != EINTR) diag("poll: %s", strerror(errno));
      continue;
    }
    if (fds[3].revents) read_report();
    if (fds[0].revents) read_stream(&out);
    if (fds[1].revents) read_stream(&err);
    if (fds[4].revents) accept_clients();
    if (fds[5].revents) write_stdin();
    for (int i = 0; i < client_slots; i++) {
      short revents = fds[6 + i].revents;
      if (!revents || clients[i].fd < 0) continue;
      if (revents & POLLOUT) write_client(&clients[i]);
      if (clients[i].fd >= 0 && (revents & (POLLIN | POLLHUP | POLLERR))) {
        if (clients[i].ending) drop_client(&clients[i]);
        else read_client(&clients[i]);
      }
    }
    if (fds[2].revents) {
      struct signalfd_siginfo info;
      while (read(sig_fd, &info, sizeof info) > 0) {
      }
      int status;
      pid_t pid;
      while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        if (pid != child) {
          if (gzip_running > 0) gzip_running--;
          if (gzip_running == 0 && gzip_deferred) compress_deferred();
          continue;
        }
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        /* The rest of its group goes with it, as a container's pid namespace dies with its init. */
        kill(-child, SIGKILL);
        snprintf(code_line, sizeof code_line, "%d -\n", code);
        snprintf(exit_code, sizeof exit_code, "%d", code);
        ended = 1;
        drain_until = mono_ms() + drain_ms;
        pending |= OP_ENDED;
        retry_at = 0;
      }
    }
  }
  for (int i = 0; i < client_slots; i++) drop_client(&clients[i]);
  close_attach_socket();
  return 0;
}

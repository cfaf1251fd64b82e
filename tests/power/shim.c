/* LD_PRELOAD recorder for the power-cut test (tests/power): logs every call the system
 * libsqlite3 makes on one database's files (open, write, pwrite, ftruncate, fsync, fdatasync,
 * close, unlink) with the bytes written, so that tests/power/replay.py can rebuild what a power
 * cut would leave on disk at every sync point.
 *
 * Environment: POWER_LOG (the log file to append to), POWER_DB (the database's absolute path;
 * its companions DB-wal, DB-journal, DB-shm and its folder are recorded too).
 * power_mark(text) adds a marker record (the child calls it through ctypes when an append has
 * returned), in order with the file operations.
 *
 * Record: op (1 byte), fd (int32), a (int64), b (int64), len (uint32), then len bytes
 * (little-endian, packed). Ops: O open (a=flags, b=1 if the file existed; payload=suffix,
 * "/" for the folder), W write (a=offset), T truncate (a=size), S sync (b=1 for fdatasync),
 * C close, U unlink (payload=suffix), M mark (payload=text).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_FD 4096

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static char db_path[PATH_MAX];
static size_t db_len;
static char dir_path[PATH_MAX];
static char *tracked[MAX_FD]; /* fd -> suffix ("", "-wal", "-journal", "-shm", "/") */

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_unlink)(const char *);

static void resolve(void) {
    if (real_write) return;
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_close = dlsym(RTLD_NEXT, "close");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    real_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_unlink = dlsym(RTLD_NEXT, "unlink");
    real_write = dlsym(RTLD_NEXT, "write");
}

__attribute__((constructor)) static void power_init(void) {
    resolve();
    const char *log_name = getenv("POWER_LOG");
    const char *db = getenv("POWER_DB");
    if (!log_name || !db || strlen(db) >= PATH_MAX - 16) return;
    strcpy(db_path, db);
    db_len = strlen(db_path);
    strcpy(dir_path, db_path);
    char *slash = strrchr(dir_path, '/');
    if (slash == NULL) return;
    if (slash == dir_path) slash[1] = '\0'; else *slash = '\0';
    log_fd = real_open(log_name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

static void put_all(const void *data, size_t len) {
    const char *p = data;
    while (len > 0) {
        ssize_t n = real_write(log_fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) abort(); /* a recording that silently loses records would prove nothing */
        p += n;
        len -= (size_t)n;
    }
}

struct __attribute__((packed)) record {
    char op;
    int32_t fd;
    int64_t a;
    int64_t b;
    uint32_t len;
};

/* Called with the lock held. */
static void emit(char op, int fd, int64_t a, int64_t b, const void *payload, size_t len) {
    struct record r = {op, fd, a, b, (uint32_t)len};
    int saved = errno;
    put_all(&r, sizeof r);
    if (len) put_all(payload, len);
    errno = saved;
}

/* The suffix of a watched path ("" for the database, "/" for its folder), or NULL. */
static const char *watched(const char *path) {
    static const char *suffixes[] = {"", "-wal", "-journal", "-shm"};
    if (log_fd < 0 || path == NULL) return NULL;
    if (strcmp(path, dir_path) == 0) return "/";
    if (strncmp(path, db_path, db_len) != 0) return NULL;
    for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++)
        if (strcmp(path + db_len, suffixes[i]) == 0) return suffixes[i];
    return NULL;
}

static int do_open(int (*fn)(const char *, int, ...), const char *path, int flags, mode_t mode) {
    const char *suffix = watched(path);
    if (suffix == NULL) return fn(path, flags, mode);
    pthread_mutex_lock(&lock);
    struct stat st;
    int existed = stat(path, &st) == 0;
    int fd = fn(path, flags, mode);
    if (fd >= 0 && fd < MAX_FD) {
        tracked[fd] = (char *)suffix;
        emit('O', fd, flags, existed, suffix, strlen(suffix));
    }
    pthread_mutex_unlock(&lock);
    return fd;
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    resolve();
    return do_open(real_open, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    resolve();
    return do_open(real_open64, path, flags, mode);
}

static int is_tracked(int fd) { return log_fd >= 0 && fd >= 0 && fd < MAX_FD && tracked[fd]; }

int close(int fd) {
    resolve();
    if (!is_tracked(fd)) return real_close(fd);
    pthread_mutex_lock(&lock);
    int rc = real_close(fd);
    if (rc == 0 || errno != EBADF) {
        emit('C', fd, 0, 0, NULL, 0);
        tracked[fd] = NULL;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static ssize_t do_pwrite(ssize_t (*fn)(int, const void *, size_t, off_t), int fd,
                         const void *buf, size_t n, off_t off) {
    if (!is_tracked(fd)) return fn(fd, buf, n, off);
    pthread_mutex_lock(&lock);
    ssize_t rc = fn(fd, buf, n, off);
    if (rc > 0) emit('W', fd, off, 0, buf, (size_t)rc);
    pthread_mutex_unlock(&lock);
    return rc;
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    resolve();
    return do_pwrite(real_pwrite, fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t off) {
    resolve();
    return do_pwrite(real_pwrite64, fd, buf, n, off);
}

ssize_t write(int fd, const void *buf, size_t n) {
    resolve();
    if (!is_tracked(fd)) return real_write(fd, buf, n);
    pthread_mutex_lock(&lock);
    off_t off = lseek(fd, 0, SEEK_CUR);
    ssize_t rc = real_write(fd, buf, n);
    if (rc > 0) emit('W', fd, off, 0, buf, (size_t)rc);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int do_truncate(int (*fn)(int, off_t), int fd, off_t size) {
    if (!is_tracked(fd)) return fn(fd, size);
    pthread_mutex_lock(&lock);
    int rc = fn(fd, size);
    if (rc == 0) emit('T', fd, size, 0, NULL, 0);
    pthread_mutex_unlock(&lock);
    return rc;
}

int ftruncate(int fd, off_t size) {
    resolve();
    return do_truncate(real_ftruncate, fd, size);
}

int ftruncate64(int fd, off_t size) {
    resolve();
    return do_truncate(real_ftruncate64, fd, size);
}

static int do_sync(int (*fn)(int), int fd, int data_only) {
    if (!is_tracked(fd)) return fn(fd);
    pthread_mutex_lock(&lock);
    int rc = fn(fd);
    if (rc == 0) emit('S', fd, 0, data_only, NULL, 0);
    pthread_mutex_unlock(&lock);
    return rc;
}

int fsync(int fd) {
    resolve();
    return do_sync(real_fsync, fd, 0);
}

int fdatasync(int fd) {
    resolve();
    return do_sync(real_fdatasync, fd, 1);
}

int unlink(const char *path) {
    resolve();
    const char *suffix = watched(path);
    if (suffix == NULL) return real_unlink(path);
    pthread_mutex_lock(&lock);
    int rc = real_unlink(path);
    if (rc == 0) emit('U', -1, 0, 0, suffix, strlen(suffix));
    pthread_mutex_unlock(&lock);
    return rc;
}

void power_mark(const char *text) {
    if (log_fd < 0) return;
    pthread_mutex_lock(&lock);
    emit('M', -1, 0, 0, text, strlen(text));
    pthread_mutex_unlock(&lock);
}

/* The lab's pod sandbox process (containerd's sandbox_image): it holds a pod's namespaces until the
 * kubelet stops the pod. As the pod's PID 1 it exits on SIGTERM or SIGINT and reaps orphans. */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int signal_number)
{
    (void)signal_number;
    _exit(0);
}

static void reap(int signal_number)
{
    (void)signal_number;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

int main(void)
{
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    signal(SIGCHLD, reap);
    for (;;) {
        pause();
    }
}

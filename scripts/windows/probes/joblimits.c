/*
 * Probe: does this Windows (or Wine) enforce the Job Object limits `limits` maps to? Run as
 * `joblimits processes|memory|cpu`: the program puts itself in a job with that one limit and
 * tries to exceed it; its last line is `<limit> enforced` or `<limit> not-enforced` (the CPU
 * probe prints `cpu enforced` first: a limit that works ends it before the second line). Built and run by
 * scripts/windows/test.sh; the Windows suites skip the limit tests a probe finds not enforced
 * (Wine 8: none is).
 */
#include <windows.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    const char *which = argc > 1 ? argv[1] : "";
    HANDLE job = CreateJobObjectW(NULL, NULL);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION li;
    int enforced;

    memset(&li, 0, sizeof li);
    if (!strcmp(which, "processes")) {
        li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
        li.BasicLimitInformation.ActiveProcessLimit = 1;
    } else if (!strcmp(which, "memory")) {
        li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_PROCESS_MEMORY;
        li.ProcessMemoryLimit = 64 << 20;
    } else if (!strcmp(which, "cpu")) {
        li.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_PROCESS_TIME;
        li.BasicLimitInformation.PerProcessUserTimeLimit.QuadPart = 5000000LL; /* 0.5 s */
    } else {
        fprintf(stderr, "usage: joblimits processes|memory|cpu\n");
        return 2;
    }
    if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &li, sizeof li) ||
        !AssignProcessToJobObject(job, GetCurrentProcess())) {
        printf("%s not-enforced (job setup failed: %lu)\n", which, GetLastError());
        return 0;
    }
    if (!strcmp(which, "processes")) {
        STARTUPINFOW si = {sizeof si};
        PROCESS_INFORMATION pi;
        wchar_t cmd[] = L"cmd.exe /c exit 0";
        enforced = !CreateProcessW(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi);
    } else if (!strcmp(which, "memory")) {
        enforced = VirtualAlloc(NULL, 256 << 20, MEM_COMMIT | MEM_RESERVE, PAGE_READWRITE) == NULL;
    } else {
        /* An enforced limit ends this process during the loop: nothing more is printed. */
        volatile unsigned long long spin = 0;
        DWORD start = GetTickCount();
        printf("cpu enforced\n");
        fflush(stdout);
        while (GetTickCount() - start < 5000)
            spin++;
        enforced = 0;
        printf("cpu not-enforced\n");
        return 0;
    }
    printf("%s %s\n", which, enforced ? "enforced" : "not-enforced");
    return 0;
}

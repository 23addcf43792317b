/*
 * Probe: does this Windows (or Wine) deliver a ConPTY's output? Creates a pseudo console and
 * starts a command attached to it (null standard handles, as the pty terminals do), reads the
 * output pipe, twice: `cmd.exe /c echo acp-conpty-probe` (the command's standard output, what a
 * pty terminal shows) and `... >CONOUT$` (a write to the console itself). Prints one line:
 * `conpty <bytes read> <marker seen on stdout: 0|1> <marker seen through CONOUT$: 0|1>`.
 * Built and run by scripts/windows/test.sh; the Windows suites skip the pty tests when the first
 * marker is not seen. Wine 8: `conpty 0 0 1`: its pseudo console works (CONOUT$ writes arrive)
 * but the command's standard handles are not the console's: what it prints goes nowhere.
 */
#define _WIN32_WINNT 0x0A00
#include <windows.h>
#include <stdio.h>
#include <string.h>

typedef VOID *HPCON_;
typedef HRESULT(WINAPI *CreatePseudoConsoleFn)(COORD, HANDLE, HANDLE, DWORD, HPCON_ *);
typedef void(WINAPI *ClosePseudoConsoleFn)(HPCON_);
#define ATTRIBUTE_PSEUDOCONSOLE 0x00020016

static HANDLE out_read;
static char buf[65536];
static DWORD total;
static DWORD all;

static DWORD WINAPI reader(LPVOID unused)
{
    DWORD n;
    (void)unused;
    while (total < sizeof buf - 1 && ReadFile(out_read, buf + total, sizeof buf - 1 - total, &n, NULL) && n > 0)
        total += n;
    return 0;
}

/* Runs `cmd` on a new pseudo console; 1 when the marker arrived, 0 when not, -1 on failure. */
static int run(CreatePseudoConsoleFn create, ClosePseudoConsoleFn close_pc, wchar_t *cmd)
{
    HANDLE in_read, in_write, out_write, thread;
    HPCON_ pc;
    STARTUPINFOEXW si;
    PROCESS_INFORMATION pi;
    SIZE_T size = 0;
    COORD cols_rows = {80, 25};

    total = 0;
    CreatePipe(&in_read, &in_write, NULL, 0);
    CreatePipe(&out_read, &out_write, NULL, 0);
    if (create(cols_rows, in_read, out_write, 0, &pc) != S_OK)
        return -1;
    thread = CreateThread(NULL, 0, reader, NULL, 0, NULL);
    memset(&si, 0, sizeof si);
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    si.lpAttributeList = HeapAlloc(GetProcessHeap(), 0, size);
    InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &size);
    UpdateProcThreadAttribute(si.lpAttributeList, 0, ATTRIBUTE_PSEUDOCONSOLE, pc, sizeof pc, NULL, NULL);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, EXTENDED_STARTUPINFO_PRESENT, NULL, NULL, &si.StartupInfo, &pi))
        return -1;
    WaitForSingleObject(pi.hProcess, 10000);
    Sleep(500); /* let the console flush what the command wrote */
    close_pc(pc);
    CloseHandle(out_write);
    WaitForSingleObject(thread, 5000);
    buf[total] = 0;
    all += total;
    return strstr(buf, "acp-conpty-probe") != NULL;
}

int main(void)
{
    HMODULE k32 = GetModuleHandleW(L"kernel32.dll");
    CreatePseudoConsoleFn create = (CreatePseudoConsoleFn)(void *)GetProcAddress(k32, "CreatePseudoConsole");
    ClosePseudoConsoleFn close_pc = (ClosePseudoConsoleFn)(void *)GetProcAddress(k32, "ClosePseudoConsole");
    wchar_t to_stdout[] = L"cmd.exe /c echo acp-conpty-probe";
    wchar_t to_conout[] = L"cmd.exe /c echo acp-conpty-probe >CONOUT$";
    int seen_stdout, seen_conout;

    if (!create || !close_pc) {
        printf("conpty 0 0 0 (no CreatePseudoConsole)\n");
        return 0;
    }
    seen_stdout = run(create, close_pc, to_stdout);
    seen_conout = run(create, close_pc, to_conout);
    if (seen_stdout < 0 || seen_conout < 0) {
        printf("conpty 0 0 0 (CreatePseudoConsole or CreateProcess failed: %lu)\n", GetLastError());
        return 0;
    }
    printf("conpty %lu %d %d\n", all, seen_stdout, seen_conout);
    return 0;
}

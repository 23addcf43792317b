/*
 * Probe: does this Windows (or Wine) deliver a ConPTY's output? Creates a pseudo console, starts
 * `cmd.exe /c echo acp-conpty-probe` attached to it (null standard handles, as the pty terminals
 * do), reads the output pipe, and prints one line: `conpty <bytes read> <marker seen: 0|1>`.
 * Built and run by scripts/windows/test.sh; the Windows suites skip the pty tests when the marker
 * is not seen (Wine 8: 0 bytes).
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

static DWORD WINAPI reader(LPVOID unused)
{
    DWORD n;
    (void)unused;
    while (total < sizeof buf - 1 && ReadFile(out_read, buf + total, sizeof buf - 1 - total, &n, NULL) && n > 0)
        total += n;
    return 0;
}

int main(void)
{
    HMODULE k32 = GetModuleHandleW(L"kernel32.dll");
    CreatePseudoConsoleFn create = (CreatePseudoConsoleFn)(void *)GetProcAddress(k32, "CreatePseudoConsole");
    ClosePseudoConsoleFn close_pc = (ClosePseudoConsoleFn)(void *)GetProcAddress(k32, "ClosePseudoConsole");
    HANDLE in_read, in_write, out_write, thread;
    HPCON_ pc;
    STARTUPINFOEXW si;
    PROCESS_INFORMATION pi;
    SIZE_T size = 0;
    wchar_t cmd[] = L"cmd.exe /c echo acp-conpty-probe";
    COORD cols_rows = {80, 25};

    if (!create || !close_pc) {
        printf("conpty 0 0 (no CreatePseudoConsole)\n");
        return 0;
    }
    CreatePipe(&in_read, &in_write, NULL, 0);
    CreatePipe(&out_read, &out_write, NULL, 0);
    if (create(cols_rows, in_read, out_write, 0, &pc) != S_OK) {
        printf("conpty 0 0 (CreatePseudoConsole failed)\n");
        return 0;
    }
    thread = CreateThread(NULL, 0, reader, NULL, 0, NULL);
    memset(&si, 0, sizeof si);
    si.StartupInfo.cb = sizeof si;
    si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
    InitializeProcThreadAttributeList(NULL, 1, 0, &size);
    si.lpAttributeList = HeapAlloc(GetProcessHeap(), 0, size);
    InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0, &size);
    UpdateProcThreadAttribute(si.lpAttributeList, 0, ATTRIBUTE_PSEUDOCONSOLE, pc, sizeof pc, NULL, NULL);
    if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, EXTENDED_STARTUPINFO_PRESENT, NULL, NULL, &si.StartupInfo, &pi)) {
        printf("conpty 0 0 (CreateProcess failed: %lu)\n", GetLastError());
        return 0;
    }
    WaitForSingleObject(pi.hProcess, 10000);
    Sleep(500); /* let the console flush what the command wrote */
    close_pc(pc);
    CloseHandle(out_write);
    WaitForSingleObject(thread, 5000);
    buf[total] = 0;
    printf("conpty %lu %d\n", total, strstr(buf, "acp-conpty-probe") != NULL);
    return 0;
}

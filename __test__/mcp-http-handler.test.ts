/**
 * `mcp.httpHandler()` carries `listenHttp`'s guards to a server the caller runs: a request addressed to
 * another name (DNS rebinding) or from another origin is 403, one without the bearer token 401, and bad
 * options are refused naming the field. A real MCP SDK client with the token runs a command through it.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpServer } from '../ts/mcp';

const TOKEN = 'a-token-of-the-callers-0123456789';

async function mounted(allowedHosts: (port: number) => string[]) {
  const mcp = createMcpServer({ cwd: process.cwd() }, { sessions: false });
  const mount: { handler?: ReturnType<typeof mcp.httpHandler> } = {};
  const server = http.createServer((req, res) => void toNodeHandler(mount.handler!)(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  mount.handler = mcp.httpHandler({ token: TOKEN, allowedHosts: allowedHosts(port) });
  const close = async () => {
    server.close();
    await mcp.close();
  };
  return { mcp, port, url: `http://127.0.0.1:${port}/mcp`, close };
}

function post(port: number, headers: Record<string, string>): Promise<number> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: {
      'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers,
    } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('httpHandler has the guards of listenHttp', () => {
  test('another Host or Origin is 403, no or a wrong token 401, the token and an allowed Host are served', async () => {
    const s = await mounted((port) => [`127.0.0.1:${port}`]);
    try {
      const auth = { authorization: `Bearer ${TOKEN}` };
      expect(await post(s.port, { ...auth, host: `rebound.example:${s.port}` })).toBe(403);
      expect(await post(s.port, { ...auth, origin: 'http://evil.example' })).toBe(403);
      expect(await post(s.port, {})).toBe(401);
      expect(await post(s.port, { authorization: `Bearer ${TOKEN}x` })).toBe(401);
      expect(await post(s.port, { ...auth, origin: `http://127.0.0.1:${s.port}` })).not.toBe(403);

      const client = new Client({ name: 'handler-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(s.url), { requestInit: { headers: auth } }));
      const result = await client.callTool({ name: 'run', arguments: { command: 'echo through-the-handler' } });
      expect(JSON.stringify(result.content)).toContain('through-the-handler');
      await client.close();
    } finally {
      await s.close();
    }
  });

  test('options without a token or allowed hosts are refused naming the field, and the server keeps working', async () => {
    const mcp = createMcpServer({ cwd: process.cwd() }, { sessions: false });
    try {
      const call = (o: unknown) => () => (mcp.httpHandler as (o: unknown) => unknown)(o);
      expect(call(undefined)).toThrow(expect.objectContaining({ code: 'ERR_INVALID_ARG', message: expect.stringContaining('options') }));
      expect(call({ allowedHosts: ['127.0.0.1:1'] })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.token') }));
      expect(call({ token: 'short', allowedHosts: ['127.0.0.1:1'] })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.token') }));
      expect(call({ token: TOKEN })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.allowedHosts') }));
      expect(call({ token: TOKEN, allowedHosts: [] })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.allowedHosts') }));
      expect(call({ token: TOKEN, allowedHosts: ['http://x:1'] })).toThrow(expect.objectContaining({ message: expect.stringContaining('options.allowedHosts') }));
      expect(typeof (mcp.httpHandler({ token: TOKEN, allowedHosts: ['localhost:8080'] }).fetch)).toBe('function');
    } finally {
      await mcp.close();
    }
  });
});

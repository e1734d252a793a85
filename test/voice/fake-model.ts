// A fake OpenAI-compatible model server: POST /chat/completions answers what `reply` says
// (text, or a hang that never answers), recording every request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeModel {
  url: string;
  requests: any[];
  reply: (request: any) => { content: string } | 'hang';
  close(): Promise<void>;
}

export async function startFakeModel(): Promise<FakeModel> {
  const model: FakeModel = { url: '', requests: [], reply: () => ({ content: 'Hello from the model.' }), close: async () => undefined };
  const hung: import('node:http').ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => { raw += d; });
    req.on('end', () => {
      const request = JSON.parse(raw);
      model.requests.push(request);
      const r = model.reply(request);
      if (r === 'hang') return void hung.push(res);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion', created: 0, model: request.model,
        choices: [{ index: 0, message: { role: 'assistant', content: r.content }, finish_reason: 'stop' }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  model.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  model.close = () => new Promise((resolve) => {
    for (const res of hung) res.destroy();
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return model;
}

// chat_stream.js: one streamed chat completion (POST /v1/chat/completions with
// stream: true), read as Server-Sent Events, with the answer's timing measured
// here in the browser: time to first token from sending the request, tokens/s
// over the decode (first token to last), the token count from the usage chunk
// (stream_options.include_usage) when the stream ends normally.
//
// Stopping is the caller's AbortController: aborting the fetch closes the
// connection, and folio aborts the generation when its client goes away
// (server/http_session.cpp), freeing the sequence's KV blocks.

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// The error a non-2xx reply carries (OpenAI's {"error": {"message"}} shape).
export async function httpError(res) {
  let message = `${res.status} ${res.statusText}`;
  try {
    const body = await res.json();
    if (body && body.error && body.error.message) message = body.error.message;
  } catch {
    // Not JSON: keep the status line.
  }
  return new HttpError(res.status, message);
}

export function authHeaders(apiKey) {
  return apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
}

// Splits "data: ..." events out of `buffer`; returns [payloads, rest].
function takeEvents(buffer) {
  const payloads = [];
  let cut;
  while ((cut = buffer.search(/\r?\n\r?\n/)) >= 0) {
    const event = buffer.slice(0, cut);
    buffer = buffer.slice(cut).replace(/^\r?\n\r?\n/, "");
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).replace(/^ /, ""));
    if (data.length) payloads.push(data.join("\n"));
  }
  return [payloads, buffer];
}

// Runs one request. `onDelta(text)` gets each piece of the answer as it
// arrives. Resolves to the answer's stats ({model, finishReason, ttftMs,
// tokens, tokensPerSecond, exactTokens, stopped}); a stop through `signal`
// resolves too (stopped: true). Rejects with HttpError on an error reply or
// an error event in the stream.
export async function streamChat({ request, apiKey, signal, onDelta }) {
  const start = performance.now();
  const stats = { model: request.model, finishReason: null, ttftMs: null, tokens: 0,
                  tokensPerSecond: null, exactTokens: false, stopped: false };
  let first = null;
  let last = null;
  const finish = () => {
    if (first !== null && last > first && stats.tokens > 1) {
      stats.tokensPerSecond = (stats.tokens - 1) / ((last - first) / 1000);
    }
    return stats;
  };
  try {
    const res = await fetch("/v1/chat/completions", {
      method: "POST",
      headers: { "Content-Type": "application/json", ...authHeaders(apiKey) },
      body: JSON.stringify({ ...request, stream: true, stream_options: { include_usage: true } }),
      signal,
    });
    if (!res.ok) throw await httpError(res);
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      let payloads;
      [payloads, buffer] = takeEvents(buffer + value);
      for (const payload of payloads) {
        if (payload === "[DONE]") return finish();
        const chunk = JSON.parse(payload);
        if (chunk.error) throw new HttpError(chunk.error.code || 500, chunk.error.message);
        if (chunk.model) stats.model = chunk.model;
        if (chunk.usage && chunk.usage.completion_tokens !== undefined) {
          stats.tokens = chunk.usage.completion_tokens;
          stats.exactTokens = true;
        }
        const choice = chunk.choices && chunk.choices[0];
        if (!choice) continue;
        const text = choice.delta && choice.delta.content;
        if (text) {
          const now = performance.now();
          if (first === null) {
            first = now;
            stats.ttftMs = now - start;
          }
          last = now;
          if (!stats.exactTokens) stats.tokens += 1;  // about one token per chunk
          onDelta(text);
        }
        if (choice.finish_reason) stats.finishReason = choice.finish_reason;
      }
    }
    return finish();
  } catch (e) {
    if (e.name !== "AbortError") throw e;
    stats.stopped = true;
    stats.finishReason = "stopped";
    return finish();
  }
}

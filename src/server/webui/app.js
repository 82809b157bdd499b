// app.js: the chat page's controller. It wires the DOM (index.html) to the
// API: the model picker from GET /v1/models, one streamed answer at a time
// (chat_stream.js), the conversation and settings in localStorage (store.js),
// answers as markdown (render.js), and an API-key prompt on 401.

import { HttpError, authHeaders, httpError, streamChat } from "/ui/chat_stream.js";
import { escapeHtml, renderMarkdown } from "/ui/render.js";
import * as store from "/ui/store.js";

const $ = (id) => document.getElementById(id);
const ui = {
  log: $("log"), prompt: $("prompt"), send: $("send"), stop: $("stop"), composer: $("composer"),
  model: $("model"), system: $("system"), temperature: $("temperature"), topP: $("top-p"),
  maxTokens: $("max-tokens"), newChat: $("new-chat"), changeKey: $("change-key"),
  status: $("server-status"), keyDialog: $("key-dialog"), keyForm: $("key-form"),
  keyInput: $("key-input"), keyReason: $("key-reason"),
};

const chat = store.loadChat();
const settings = store.loadSettings();
let apiKey = store.loadApiKey();
let controller = null;  // the AbortController of the answer in flight

// ---- API key ----------------------------------------------------------------

// Why the key dialog opens: `message` is the server's 401 text.
function keyReason(message) {
  return apiKey ? `The server refused this key: ${message}` : "This server needs an API key.";
}

// Shows the key dialog; resolves to true when a key was saved.
function askForKey(reason) {
  ui.keyReason.textContent = reason;
  ui.keyInput.value = apiKey;
  ui.keyDialog.returnValue = "";  // Escape keeps the last value
  ui.keyDialog.showModal();
  ui.keyInput.focus();
  return new Promise((resolve) => {
    ui.keyDialog.addEventListener("close", () => resolve(ui.keyDialog.returnValue === "save"),
                                  { once: true });
  });
}

ui.keyForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const save = e.submitter ? e.submitter.value === "save" : true;
  if (save) {
    apiKey = ui.keyInput.value.trim();
    store.saveApiKey(apiKey);
  }
  ui.keyDialog.close(save ? "save" : "cancel");
});

// ---- models -----------------------------------------------------------------

async function loadModels() {
  ui.status.textContent = "Loading models…";
  try {
    const res = await fetch("/v1/models", { headers: authHeaders(apiKey) });
    if (res.status === 401) {
      ui.status.textContent = "This server needs an API key.";
      if (await askForKey(keyReason((await httpError(res)).message))) return loadModels();
      return;
    }
    if (!res.ok) throw await httpError(res);
    const ids = (await res.json()).data.map((m) => m.id);
    ui.model.replaceChildren(...ids.map((id) => new Option(id, id)));
    ui.model.value = ids.includes(settings.model) ? settings.model : ids[0];
    settings.model = ui.model.value;
    ui.status.textContent = `${ids.length} model${ids.length === 1 ? "" : "s"} served`;
  } catch (e) {
    ui.status.textContent = `Cannot list models: ${e.message}`;
  }
}

// ---- settings ---------------------------------------------------------------

function showSettings() {
  ui.system.value = settings.system;
  ui.temperature.value = settings.temperature;
  ui.topP.value = settings.top_p;
  ui.maxTokens.value = settings.max_tokens;
}

function readSettings() {
  const num = (input, fallback) => {
    const v = Number.parseFloat(input.value);
    return Number.isFinite(v) ? v : fallback;
  };
  settings.model = ui.model.value;
  settings.system = ui.system.value;
  settings.temperature = num(ui.temperature, store.DEFAULT_SETTINGS.temperature);
  settings.top_p = num(ui.topP, store.DEFAULT_SETTINGS.top_p);
  const maxTokens = num(ui.maxTokens, store.DEFAULT_SETTINGS.max_tokens);
  settings.max_tokens = Math.max(1, Math.round(maxTokens));
  store.saveSettings(settings);
}

for (const input of [ui.model, ui.system, ui.temperature, ui.topP, ui.maxTokens]) {
  input.addEventListener("change", readSettings);
}

// ---- messages ---------------------------------------------------------------

function statsText(s) {
  const parts = [s.model];
  if (s.ttftMs !== null) parts.push(`TTFT ${Math.round(s.ttftMs)} ms`);
  if (s.tokensPerSecond !== null) parts.push(`${s.tokensPerSecond.toFixed(1)} tok/s`);
  parts.push(`${s.exactTokens ? "" : "≈"}${s.tokens} tokens`);
  if (s.finishReason) parts.push(s.finishReason);
  return parts.join(" · ");
}

function fillMessage(el, msg) {
  const content = el.querySelector(".content");
  if (msg.error) content.textContent = msg.error;
  else if (msg.role === "assistant") content.innerHTML = renderMarkdown(msg.content);
  else content.innerHTML = escapeHtml(msg.content);
  const stats = el.querySelector(".stats");
  stats.textContent = msg.stats ? statsText(msg.stats) : "";
  if (msg.stats) {
    el.dataset.model = msg.stats.model;
    el.dataset.finish = msg.stats.finishReason || "";
  }
}

function appendMessage(msg) {
  const el = document.createElement("div");
  el.className = `msg ${msg.error ? "error" : msg.role}`;
  el.innerHTML = '<div class="content"></div><div class="stats"></div>';
  fillMessage(el, msg);
  ui.log.append(el);
  return el;
}

function showChat() {
  ui.log.replaceChildren();
  for (const msg of chat.messages) appendMessage(msg);
  ui.log.scrollTop = ui.log.scrollHeight;
}

function setBusy(busy) {
  ui.send.hidden = busy;
  ui.stop.hidden = !busy;
  document.body.dataset.busy = busy ? "true" : "false";
}

// ---- one answer -------------------------------------------------------------

// The request for the conversation so far (error notes are not sent).
function chatRequest() {
  const messages = chat.messages
    .filter((m) => !m.error && (m.role === "user" || m.role === "assistant") && m.content)
    .map((m) => ({ role: m.role, content: m.content }));
  if (settings.system.trim()) messages.unshift({ role: "system", content: settings.system });
  return { model: settings.model, messages, temperature: settings.temperature,
           top_p: settings.top_p, max_tokens: settings.max_tokens };
}

// Streams one answer into the conversation. Resolves to the 401 error when
// the server wants a (different) API key, else to null.
async function answerOnce() {
  const messages = chat.messages;  // "New chat" mid-answer leaves this one behind
  const request = chatRequest();
  const msg = { role: "assistant", content: "" };
  const el = appendMessage(msg);
  el.dataset.state = "streaming";
  let pending = null;  // a scheduled redraw: at most one per 40 ms, not one per token
  const redraw = () => {
    pending = null;
    const atBottom = ui.log.scrollHeight - ui.log.scrollTop - ui.log.clientHeight < 40;
    fillMessage(el, msg);
    if (atBottom) ui.log.scrollTop = ui.log.scrollHeight;
  };
  controller = new AbortController();
  setBusy(true);
  try {
    msg.stats = await streamChat({
      request, apiKey, signal: controller.signal,
      onDelta: (text) => {
        msg.content += text;
        pending ??= setTimeout(redraw, 40);
      },
    });
    messages.push(msg);
    clearTimeout(pending);
    redraw();
    el.dataset.state = "done";
  } catch (e) {
    el.remove();
    if (e instanceof HttpError && e.status === 401) return e;
    const note = { role: "assistant", error: `Error: ${e.message}` };
    messages.push(note);
    appendMessage(note).dataset.state = "done";
  } finally {
    clearTimeout(pending);
    controller = null;
    setBusy(false);
    store.saveChat(chat);
  }
  return null;
}

async function answer() {
  for (;;) {
    const unauthorized = await answerOnce();
    if (!unauthorized || !(await askForKey(keyReason(unauthorized.message)))) return;
    await loadModels();
  }
}

ui.composer.addEventListener("submit", (e) => {
  e.preventDefault();
  const text = ui.prompt.value.trim();
  if (!text || controller) return;
  readSettings();
  ui.prompt.value = "";
  const msg = { role: "user", content: text };
  chat.messages.push(msg);
  appendMessage(msg);
  store.saveChat(chat);
  ui.log.scrollTop = ui.log.scrollHeight;
  answer();
});

ui.prompt.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    ui.composer.requestSubmit();
  }
});

ui.stop.addEventListener("click", () => {
  if (controller) controller.abort();
});

ui.newChat.addEventListener("click", () => {
  if (controller) controller.abort();
  chat.messages = [];
  store.saveChat(chat);
  showChat();
  ui.prompt.focus();
});

ui.changeKey.addEventListener("click", async () => {
  if (await askForKey("API key for this server (stored in this browser).")) loadModels();
});

// ---- start ------------------------------------------------------------------

// marked and highlight.js are deferred classic scripts: they have run before
// this module (modules are deferred too, and run in document order).
showSettings();
showChat();
setBusy(false);
loadModels();

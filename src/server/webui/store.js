// store.js: what the page keeps in the browser's localStorage, so a reload
// shows the same conversation and settings. Nothing leaves the browser but
// the requests themselves; the API key is sent only as a Bearer header to
// this same origin.
//
//   folio.chat.v1      {messages: [{role, content, model?, stats?, error?}]}
//   folio.settings.v1  {model, system, temperature, top_p, max_tokens}
//   folio.apiKey       the key, as typed

const CHAT = "folio.chat.v1";
const SETTINGS = "folio.settings.v1";
const KEY = "folio.apiKey";

export const DEFAULT_SETTINGS = Object.freeze({
  model: "",
  system: "",
  temperature: 0.7,
  top_p: 0.95,
  max_tokens: 512,
});

function read(name, fallback) {
  try {
    const text = localStorage.getItem(name);
    return text === null ? fallback : JSON.parse(text);
  } catch {
    return fallback;  // storage disabled, or a value from another version
  }
}

function write(name, value) {
  try {
    localStorage.setItem(name, JSON.stringify(value));
  } catch {
    // Full or disabled: the page still works, only without persistence.
  }
}

export function loadChat() {
  const chat = read(CHAT, null);
  return chat && Array.isArray(chat.messages) ? chat : { messages: [] };
}

export function saveChat(chat) {
  write(CHAT, { messages: chat.messages });
}

export function loadSettings() {
  return { ...DEFAULT_SETTINGS, ...read(SETTINGS, {}) };
}

export function saveSettings(settings) {
  write(SETTINGS, settings);
}

export function loadApiKey() {
  try {
    return localStorage.getItem(KEY) || "";
  } catch {
    return "";
  }
}

export function saveApiKey(key) {
  try {
    if (key) localStorage.setItem(KEY, key);
    else localStorage.removeItem(KEY);
  } catch {
    // As saveChat: the key then lasts until the page is closed.
  }
}

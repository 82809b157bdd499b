// render.js: an answer's markdown as HTML, with highlighted code blocks.
//
// marked (markdown) and hljs (highlight.js) are Debian's libjs-marked and
// libjs-highlight.js, loaded by index.html as globals. Answers are model
// output, so raw HTML in them is shown as text, and links may only be http(s)
// or mailto; the page's Content-Security-Policy (server/handlers_web_ui.cpp)
// is the second fence.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function highlight(code, lang) {
  const hljs = window.hljs;
  if (!hljs) return escapeHtml(code);
  if (lang && hljs.getLanguage(lang)) return hljs.highlight(lang, code, true).value;
  return hljs.highlightAuto(code).value;
}

const renderer = {
  html(html) {
    return escapeHtml(html);
  },
  code(code, info) {
    const lang = (info || "").trim().split(/\s+/)[0];
    const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "";
    return `<pre>${label}<code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ""}">` +
           `${highlight(code.replace(/\n$/, ""), lang)}</code></pre>\n`;
  },
  link(href, title, text) {
    if (!/^(https?:|mailto:)/i.test(href || "")) return text;
    const t = title ? ` title="${escapeHtml(title)}"` : "";
    const attrs = `href="${escapeHtml(href)}"${t} target="_blank" rel="noopener noreferrer"`;
    return `<a ${attrs}>${text}</a>`;
  },
  image(href, title, text) {
    return escapeHtml(text || "");  // no remote fetches from model output
  },
};

let configured = false;

// `markdown` rendered to HTML; plain escaped text when marked is missing.
export function renderMarkdown(markdown) {
  const marked = window.marked;
  if (!marked) return `<p>${escapeHtml(markdown)}</p>`;
  if (!configured) {
    marked.use({ renderer, gfm: true, breaks: false });
    configured = true;
  }
  return marked.parse(markdown);
}

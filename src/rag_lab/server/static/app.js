// rag_lab web page. Every piece of text from the corpus or the server is inserted with
// textContent (through el() and text nodes), never as HTML. Labels are Chinese by default,
// English through the switch in the header (remembered in localStorage).
"use strict";

const $ = (selector) => document.querySelector(selector);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

const WORDS = {
  zh: {
    switch_to: "English",
    tagline: "只回答来源支持的内容；每条引用都能打开原始文件核对。",
    question: "问题",
    ask: "提问",
    options: "选项",
    top_k: "候选数 top_k",
    budget: "上下文预算（码位）",
    as_of: "按此日期",
    as_name: "提问身份",
    groups: "所属组",
    status: { answered: "已回答", refused: "未回答", partial: "部分回答", needs_clarification: "需要澄清" },
    reasons: {
      index_stale: "索引建立后文件有改动，重建索引之前不回答任何问题。",
      source_verification_failed: "有来源与建索引时的字节不再一致，不能引用。",
      conflicting_evidence: "来源之间说法不一致。没有哪个来源被优先采信，所以不给答案；各方说法并列如下。",
      no_supporting_evidence: "语料中没有来源支持这个回答。这并不说明答案是“没有”。",
      evidence_not_retrieved: "语料里有这条信息，但检索没有找到它。请换用更具体的词，或加大 top_k。",
      excluded_by_budget: "找到了证据，但放不进上下文预算。请加大预算。",
      unsupported_attribute: "图片只测量颜色、大小和形状；问题问到了别的属性。",
      reserved_field: "这个字段只作为数据保存，从不作为答案给出。",
      subject_without_field: "问题提到了主题，但没有说要问它的哪个字段。",
      field_without_subject: "问题提到了字段，但没有提到语料中已知的主题。",
      ambiguous_subject: "问题可能指不止一个主题。",
      ambiguous_field: "问题可能指不止一个字段。",
      partial_support: "来源只支持问题的一部分。",
    },
    reason_unknown: "没有回答（原因：{reason}）。",
    details: "详细说明（英文）：",
    slot_sentence: "{subject}的{field}是：",
    image_sentence: "{count} 张图片重新测量为：",
    answered_part: "已回答的部分：",
    sides_heading: "{subject} {field}：{count} 个不同的值",
    side_sources: "{count} 个来源",
    what_to_add: "请补充：",
    what_missing: "缺少什么：",
    pick_field: "{subject} 有这些字段，点一个再问：",
    pick_subject: "有「{field}」的主题，点一个再问：",
    pick_option: "可能的意思，点一个再问：",
    more_subjects: "还有更多，请在问题里写出主题。",
    no_fields: "{subject} 没有可以回答的字段。",
    changed: { added: "新增", deleted: "删除", modified: "改动" },
    failed_check: "{source}（{id}）未通过 {check} 检查：{detail}",
    sources: "来源（{checked} 个已与原始字节核对）",
    line: "第 {line} 行",
    checking: "正在重新核验…",
    verify_on_open: "打开时重新核验",
    verified_now: "✓ 刚刚重新核验（{time}）",
    verify_failed: "✗ 重新核验失败：{check}（{time}）",
    checks: "检查项：{checks}",
    tech: "哈希与码位区间",
    sha256: "sha256 {sha}",
    sha_now: "（现在是 {sha}）",
    span: "码位区间 [{start}, {end})（按 Unicode 码位计），第 {line} 行",
    evidence_id: "证据编号 {id}",
    bbox: "图中位置 bbox {bbox} · {text}",
    file_unreadable: "现在无法读取该文件。",
    image_failed: "图片未通过重新核验，不予显示。",
    network: "网络错误",
    field_match: "由「{asked}」匹配到字段「{field}」（{method}）",
    runner_up: "次选：{runner_up}",
    methods: { verbatim: "原文出现", normalized: "规范化后相同", partial: "部分匹配", alias: "别名表", embedding: "语义相近" },
    coverage: "引用覆盖率：{percent}%",
    unsupported_claim: "这句话没有得到所引来源的支持",
    preview_loading: "正在打开…",
    open_source: "打开原文",
    loading: "…",
  },
  en: {
    switch_to: "中文",
    tagline: "Answers only what the sources support; every citation opens the original file.",
    question: "Question",
    ask: "Ask",
    options: "Options",
    top_k: "top_k",
    budget: "budget (code points)",
    as_of: "as of",
    as_name: "ask as",
    groups: "groups",
    status: { answered: "Answered", refused: "Refused", partial: "Partly answered", needs_clarification: "Needs clarification" },
    reasons: {
      index_stale: "The files changed after the index was built, so nothing is answered until the index is rebuilt.",
      source_verification_failed: "A source no longer matches the bytes it was indexed from, so it cannot be cited.",
      conflicting_evidence: "The sources disagree. No source is preferred, so there is no answer; every side is shown below.",
      no_supporting_evidence: "No source in the corpus supports an answer. That is not evidence that the answer is no.",
      evidence_not_retrieved: "The corpus has this information, but the search did not bring it up. Try more specific words or a larger top_k.",
      excluded_by_budget: "The evidence was found but did not fit in the context budget.",
      unsupported_attribute: "Images are only measured for colour, size and shape; the question asks for something else.",
      reserved_field: "That field is kept as data and is never given as an answer.",
      subject_without_field: "The question names a subject but not which of its fields you want.",
      field_without_subject: "The question names a field but no subject the corpus knows.",
      ambiguous_subject: "The question could mean more than one subject.",
      ambiguous_field: "The question could mean more than one field.",
      partial_support: "Only part of the question is supported by the sources.",
    },
    reason_unknown: "Not answered (reason: {reason}).",
    details: "Details: ",
    slot_sentence: "{field} of {subject}: ",
    image_sentence: "{count} image(s) re-measured as ",
    answered_part: "Answered part: ",
    sides_heading: "{subject} {field}: {count} different values",
    side_sources: "{count} source(s)",
    what_to_add: "What to add:",
    what_missing: "What is missing:",
    pick_field: "{subject} has these fields; pick one to ask again:",
    pick_subject: "Subjects with {field}; pick one to ask again:",
    pick_option: "Possible meanings; pick one to ask again:",
    more_subjects: "There are more; name the subject in the question.",
    no_fields: "{subject} has no field that can be answered.",
    changed: { added: "added", deleted: "deleted", modified: "modified" },
    failed_check: "{source} ({id}) failed the {check} check: {detail}",
    sources: "Sources ({checked} checked against the original bytes)",
    line: "line {line}",
    checking: "re-verifying…",
    verify_on_open: "re-verified when opened",
    verified_now: "✓ re-verified just now ({time})",
    verify_failed: "✗ failed re-verification: {check} ({time})",
    checks: "checks: {checks}",
    tech: "hashes and code-point spans",
    sha256: "sha256 {sha}",
    sha_now: " (now {sha})",
    span: "span [{start}, {end}) in Unicode code points, line {line}",
    evidence_id: "evidence id {id}",
    bbox: "bbox {bbox} · {text}",
    file_unreadable: "The file cannot be read now.",
    image_failed: "The image failed re-verification and is not shown.",
    network: "network error",
    field_match: "matched {field} from {asked} ({method})",
    runner_up: "runner-up: {runner_up}",
    methods: { verbatim: "verbatim", normalized: "same after normalizing", partial: "partial match", alias: "alias table", embedding: "similar meaning" },
    coverage: "citation coverage: {percent}%",
    unsupported_claim: "This sentence is not supported by the cited sources",
    preview_loading: "opening…",
    open_source: "open the original",
    loading: "…",
  },
};

let lang = "zh";
// Cards re-verified as soon as they are shown (each is one request); later ones on opening.
const CARDS_VERIFIED = 30;
let current = null; // { result, numbers: Map(evidence_id → number), views: Map(evidence_id → Promise) }
let asking = 0; // request counter: a late answer to an older question is dropped

function t(key, values) {
  let text = WORDS[lang][key];
  if (text === undefined) text = WORDS.en[key];
  if (typeof text !== "string") return text;
  for (const [name, value] of Object.entries(values || {})) text = text.split("{" + name + "}").join(String(value));
  return text;
}

function applyLanguage() {
  document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  $("#lang").textContent = t("switch_to");
  $("#lang").lang = lang === "zh" ? "en" : "zh-CN";
  if (current) renderResult(current.result);
}

function setLanguage(next) {
  lang = next === "en" ? "en" : "zh";
  try {
    localStorage.setItem("rag_lab.lang", lang);
  } catch (err) {
    // storage may be disabled; the switch still works for this page
  }
  applyLanguage();
}

// ---- evidence views (each one a re-verification on the server) -----------------------

// The caller the page asks as (null: the server's default caller).
function currentPrincipal() {
  const name = $("#as_name").value.trim();
  if (!name) return null;
  const groups = $("#groups").value.split(",").map((g) => g.trim()).filter((g) => g);
  return { name: name, groups: groups };
}

// The evidence endpoints take the same caller as query parameters.
function withPrincipal(url) {
  const who = currentPrincipal();
  if (!who) return url;
  const query = new URLSearchParams({ as: who.name, groups: who.groups.join(",") });
  return url + "?" + query.toString();
}

function evidenceView(id) {
  if (!current) return Promise.reject(new Error("no result"));
  if (!current.views.has(id)) {
    const promise = fetch(withPrincipal("/api/evidence/" + encodeURIComponent(id))).then(async (response) => {
      const body = await response.json();
      if (!response.ok) throw body.error || { type: "error", message: String(response.status) };
      return body;
    });
    current.views.set(id, promise);
  }
  return current.views.get(id);
}

function citedLine(view) {
  const excerpt = view.excerpt;
  if (!excerpt || !excerpt.highlight) return view.text || "";
  const line = excerpt.lines.find((l) => l.number === excerpt.highlight.line);
  return line ? line.text.trim() : view.text || "";
}

function documentTitle(view) {
  const excerpt = view.excerpt;
  if (excerpt && excerpt.first_line === 1) {
    for (const line of excerpt.lines) {
      const match = /^\uFEFF?#{1,6}\s+(.+)$/.exec(line.text);
      if (match) return match[1].trim();
    }
  }
  return view.subject || view.text || view.source.split("/").pop();
}

function checkedAt(view) {
  return new Date(view.checked_at).toLocaleTimeString(lang === "zh" ? "zh-CN" : "en-GB");
}

function verifiedLine(view) {
  return view.verified
    ? el("p", "verified ok", t("verified_now", { time: checkedAt(view) }))
    : el("p", "verified failed", t("verify_failed", { check: view.verification.failed_check + ": " + view.verification.detail, time: checkedAt(view) }));
}

function techDetails(view, cite) {
  const details = el("details", "tech");
  details.append(el("summary", null, t("tech")));
  const sha = el("p", "sha", t("sha256", { sha: (view || cite).sha256 }));
  if (view && view.current_sha256 && view.current_sha256 !== view.sha256) sha.append(t("sha_now", { sha: view.current_sha256 }));
  details.append(sha);
  const span = (view || cite).span;
  if (span) details.append(el("p", "span-words", t("span", { start: span[0], end: span[1], line: (view || cite).line })));
  details.append(el("p", "eid", t("evidence_id", { id: cite.evidence_id })));
  if (view) details.append(el("p", "checks", t("checks", { checks: view.verification.checks.join(", ") })));
  return details;
}

// ---- citation marks, hover previews -----------------------------------------------------

function citeLabel(cite) {
  return cite.source + (cite.line ? ":" + cite.line : "");
}

function citeButton(id) {
  const number = current.numbers.get(id);
  const cite = current.result.citations[number - 1];
  const button = el("button", "cite", "[" + number + "]");
  button.type = "button";
  button.dataset.evidenceId = id;
  button.setAttribute("aria-label", citeLabel(cite));
  button.addEventListener("click", () => openCitation(cite, number));
  button.addEventListener("mouseenter", () => showPreview(button, cite));
  button.addEventListener("focus", () => showPreview(button, cite));
  button.addEventListener("mouseleave", hidePreview);
  button.addEventListener("blur", hidePreview);
  return button;
}

function marks(ids) {
  const sup = el("sup", "marks");
  for (const id of ids) {
    if (current.numbers.has(id)) sup.append(citeButton(id));
  }
  return sup;
}

function showPreview(button, cite) {
  const box = $("#preview");
  box.replaceChildren(el("div", "preview-where", citeLabel(cite)), el("div", "preview-text", t("preview_loading")));
  box.dataset.evidenceId = cite.evidence_id;
  box.hidden = false;
  const rect = button.getBoundingClientRect();
  box.style.left = Math.max(8, Math.min(rect.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - 380)) + "px";
  box.style.top = rect.bottom + window.scrollY + 6 + "px";
  evidenceView(cite.evidence_id).then(
    (view) => {
      if (box.dataset.evidenceId !== cite.evidence_id || box.hidden) return;
      box.replaceChildren(
        el("div", "preview-where", documentTitle(view) + " · " + citeLabel(view)),
        el("div", "preview-text", citedLine(view)),
        verifiedLine(view),
      );
    },
    (error) => {
      if (box.dataset.evidenceId === cite.evidence_id) box.replaceChildren(el("div", "error", error.message || String(error)));
    },
  );
}

function hidePreview() {
  const box = $("#preview");
  box.hidden = true;
  delete box.dataset.evidenceId;
}

// ---- the answer as a sentence -------------------------------------------------------------

// "[E1]" markers → evidence ids: from the claims, else from the request's package.
function markerMap(result) {
  const map = new Map();
  for (const claim of result.claims || []) {
    (claim.evidence || []).forEach((marker, i) => {
      if (claim.evidence_ids && claim.evidence_ids[i]) map.set(marker, claim.evidence_ids[i]);
    });
  }
  const events = (result.trace && result.trace.events) || [];
  const pkg = events.find((e) => e.step === "package");
  if (pkg && pkg.ids) for (const [marker, id] of Object.entries(pkg.ids)) if (!map.has(marker)) map.set(marker, id);
  return map;
}

// Text with [E1] markers: the text as text nodes, each marker as its citation mark.
function withMarkers(text, map, into) {
  const parts = String(text).split(/(\[E\d+\])/);
  for (const part of parts) {
    const match = /^\[(E\d+)\]$/.exec(part);
    if (!match) {
      if (part) into.append(document.createTextNode(part));
    } else if (map.has(match[1]) && current.numbers.has(map.get(match[1]))) {
      into.append(marks([map.get(match[1])]));
    } else {
      into.append(el("sup", "unresolved", part));
    }
  }
}

function claimsSentence(result, sentence) {
  const map = markerMap(result);
  for (const claim of result.claims) {
    const span = el("span", "claim");
    span.dataset.supported = String(claim.supported !== false);
    if (claim.supported === false) span.title = t("unsupported_claim");
    const bare = String(claim.text || "").replace(/\s*\[E\d+\]/g, "");
    withMarkers(bare, map, span);
    const ids = claim.evidence_ids || (claim.evidence || []).map((m) => map.get(m)).filter((x) => x);
    span.append(marks(ids));
    sentence.append(span);
  }
}

function slotSentence(slot, sentence) {
  const ids = (slot.citations || []).map((c) => c.evidence_id);
  const part = el("span", "claim");
  part.dataset.supported = "true";
  if (slot.field === "image") part.append(t("image_sentence", { count: ids.length }));
  else part.append(t("slot_sentence", { subject: slot.subject, field: slot.field }));
  part.append(el("strong", "answer-value", slot.answer));
  part.append(marks(ids));
  sentence.append(part);
}

function renderAnswer(result, box) {
  const hasText = typeof result.text === "string" && result.text.trim() !== "";
  const hasClaims = Array.isArray(result.claims) && result.claims.length > 0;
  const answeredSlots = (result.slots || []).filter((s) => s.status === "answered" && s.answer !== null && s.answer !== undefined);
  if (!hasText && !hasClaims && !answeredSlots.length && (result.answer === null || result.answer === undefined)) return;
  const answer = el("div", "answer");
  if (result.status === "partial") answer.append(el("span", "answered-part", t("answered_part")));
  const sentence = el("p", "sentence");
  if (hasClaims) claimsSentence(result, sentence);
  else if (hasText) withMarkers(result.text, markerMap(result), sentence);
  else if (answeredSlots.length) answeredSlots.forEach((slot) => slotSentence(slot, sentence));
  else {
    sentence.append(el("strong", "answer-value", result.answer));
    sentence.append(marks(result.citations.map((c) => c.evidence_id)));
  }
  answer.append(sentence);
  box.append(answer);
}

function fieldMatchLine(match) {
  const method = (WORDS[lang].methods || {})[match.method] || match.method;
  const line = el("p", "field-match", t("field_match", { asked: match.asked, field: match.field, method: method }));
  if (match.runner_up) line.append(" · " + t("runner_up", { runner_up: match.runner_up }));
  return line;
}

function renderHow(result, box) {
  const matches = [];
  if (result.field_match) matches.push(result.field_match);
  for (const slot of result.slots || []) if (slot.field_match && slot.field_match !== result.field_match) matches.push(slot.field_match);
  for (const match of matches) {
    if (match && match.method !== "verbatim" && match.field) box.append(fieldMatchLine(match));
  }
  if (typeof result.coverage === "number") {
    box.append(el("p", "coverage", t("coverage", { percent: Math.round(result.coverage * 100) })));
  }
}

// ---- refusals: why, sides, what to add --------------------------------------------------

function renderSides(result, box) {
  for (const slot of result.slots || []) {
    if (!slot.sides) continue;
    box.append(el("p", "sides-heading", t("sides_heading", { subject: slot.subject, field: slot.field, count: slot.sides.length })));
    const row = el("div", "sides");
    for (const side of slot.sides) {
      const column = el("div", "side");
      column.append(el("div", "value", side.value), el("div", "side-count", t("side_sources", { count: side.evidence_ids.length })));
      const list = el("ul");
      for (const id of side.evidence_ids) {
        const item = el("li");
        const number = current.numbers.get(id);
        if (number) item.append(citeButton(id), " ", el("span", "source", citeLabel(current.result.citations[number - 1])));
        else item.append(el("span", "source", id));
        list.append(item);
      }
      column.append(list);
      row.append(column);
    }
    box.append(row);
  }
}

function askAgainButton(question, label) {
  const button = el("button", "choice", label);
  button.type = "button";
  button.dataset.question = question;
  button.addEventListener("click", () => {
    $("#question").value = question;
    submitQuestion();
  });
  return button;
}

function withoutOthers(question, keep, options) {
  let text = question;
  for (const other of options) if (other !== keep && !keep.includes(other)) text = text.split(other).join(" ");
  return text.replace(/\s+/g, " ").trim();
}

function renderClarification(result, section) {
  const clar = result.clarification;
  if (!clar) return;
  const choices = el("div", "choices");
  if (clar.fields) {
    section.append(el("p", null, clar.fields.length ? t("pick_field", { subject: clar.subject }) : t("no_fields", { subject: clar.subject })));
    for (const field of clar.fields) choices.append(askAgainButton(clar.subject + " " + field, field));
  }
  if (clar.subjects) {
    section.append(el("p", null, t("pick_subject", { field: clar.field })));
    for (const subject of clar.subjects) choices.append(askAgainButton(subject + " " + clar.field, subject));
  }
  if (clar.options) {
    section.append(el("p", null, t("pick_option")));
    for (const option of clar.options) choices.append(askAgainButton(withoutOthers(result.question, option, clar.options), option));
  }
  section.append(choices);
  if (clar.more) section.append(el("p", "message", t("more_subjects")));
}

function renderMissing(result, box) {
  const items = [];
  const stale = result.stale;
  if (stale) {
    for (const kind of ["added", "deleted", "modified"]) {
      for (const path of stale[kind] || []) items.push(t("changed")[kind] + ": " + path);
    }
  }
  const failure = result.verification_failure;
  if (failure) {
    items.push(t("failed_check", { source: failure.source, id: failure.evidence_id, check: failure.failed_check, detail: failure.detail }));
  }
  for (const slot of result.slots || []) {
    if (slot.status !== "answered" && !slot.sides) items.push(slot.subject + " " + slot.field + ": " + slot.message);
  }
  if (!items.length && !result.clarification) return;
  const section = el("div", "missing");
  if (items.length) {
    section.append(el("p", null, result.status === "needs_clarification" ? t("what_to_add") : t("what_missing")));
    const list = el("ul");
    for (const item of items) list.append(el("li", null, item));
    section.append(list);
  }
  renderClarification(result, section);
  box.append(section);
}

// ---- source cards -------------------------------------------------------------------------

function sourceCard(cite, number) {
  const card = el("li", "card");
  card.dataset.evidenceId = cite.evidence_id;
  const head = el("div", "card-head");
  head.append(citeButton(cite.evidence_id), " ", el("strong", "card-title", cite.source.split("/").pop()));
  card.append(head);
  const where = el("div", "card-where");
  where.append(el("span", "source", cite.source));
  if (cite.line) where.append(" · ", el("span", "card-line", t("line", { line: cite.line })));
  card.append(where);
  const quote = el("div", "card-quote");
  const status = el("p", "verified pending", t("checking"));
  card.append(quote, status, techDetails(null, cite));
  const open = el("button", "open", t("open_source"));
  open.type = "button";
  open.addEventListener("click", () => openCitation(cite, number));
  card.append(open);
  if (number > CARDS_VERIFIED) {
    status.textContent = t("verify_on_open");
    return card;
  }
  evidenceView(cite.evidence_id).then(
    (view) => {
      card.querySelector(".card-title").textContent = documentTitle(view);
      quote.textContent = view.modality === "image" ? view.text || "" : citedLine(view);
      status.replaceWith(verifiedLine(view));
      card.querySelector("details.tech").replaceWith(techDetails(view, cite));
    },
    (error) => status.replaceWith(el("p", "verified failed", (error.type || "error") + ": " + (error.message || ""))),
  );
  return card;
}

function renderSources(result, box) {
  if (!result.citations.length) return;
  box.append(el("p", "sources-heading", t("sources", { checked: result.same_key_sources_checked })));
  const list = el("ol", "citations sources");
  result.citations.forEach((cite, i) => list.append(sourceCard(cite, i + 1)));
  box.append(list);
}

// ---- the result pane --------------------------------------------------------------------------

function renderResult(result) {
  const box = $("#result");
  const views = current && current.result === result ? current.views : new Map();
  const numbers = new Map();
  result.citations.forEach((cite, i) => numbers.set(cite.evidence_id, i + 1));
  current = { result: result, numbers: numbers, views: views };
  box.replaceChildren();
  box.dataset.status = result.status;
  box.append(el("span", "status " + result.status, (WORDS[lang].status || {})[result.status] || result.status));
  renderAnswer(result, box);
  renderHow(result, box);
  if (result.status !== "answered") {
    const why = result.reason ? WORDS[lang].reasons[result.reason] || t("reason_unknown", { reason: result.reason }) : null;
    if (why) box.append(el("p", "why", why));
  }
  if (result.status !== "answered" && result.message) {
    // The library's own message (English): what failed, where, how to fix it.
    const message = el("p", "message");
    message.append(el("span", "message-label", t("details")), document.createTextNode(result.message));
    box.append(message);
  }
  renderSides(result, box);
  renderMissing(result, box);
  renderSources(result, box);
  const viewer = $("#viewer");
  if (!viewer.hidden && viewer.dataset.number) refreshViewerLabels();
}

function renderError(box, error) {
  box.replaceChildren();
  box.dataset.status = "error";
  box.append(el("p", "error", error.type), el("p", "message", error.message));
}

function clearViewer() {
  const viewer = $("#viewer");
  viewer.hidden = true;
  viewer.replaceChildren();
  delete viewer.dataset.evidenceId;
  delete viewer.dataset.number;
  $(".panes").classList.remove("with-viewer");
  hidePreview();
}

async function submitQuestion() {
  const body = { question: $("#question").value };
  const topK = parseInt($("#top_k").value, 10);
  const budget = parseInt($("#budget").value, 10);
  if (!Number.isNaN(topK)) body.top_k = topK;
  if (!Number.isNaN(budget)) body.budget = budget;
  if ($("#as_of").value) body.as_of = $("#as_of").value;
  const who = currentPrincipal();
  if (who) body.principal = { name: who.name, groups: who.groups };
  const box = $("#result");
  const mine = ++asking;
  current = null;
  clearViewer();
  delete box.dataset.status;
  box.replaceChildren(el("p", "message", t("loading")));
  try {
    const response = await fetch("/api/ask", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await response.json();
    if (mine !== asking) return;
    if (response.ok) renderResult(data);
    else renderError(box, data.error);
  } catch (err) {
    if (mine === asking) renderError(box, { type: t("network"), message: String(err) });
  }
}

// ---- the evidence pane ------------------------------------------------------------------------

function renderFile(view, pane) {
  const excerpt = view.excerpt;
  if (!excerpt) {
    pane.append(el("p", "error", t("file_unreadable")));
    return;
  }
  const table = el("table", "file");
  const mark = excerpt.highlight;
  for (const line of excerpt.lines) {
    const row = el("tr");
    row.append(el("td", "num", line.number));
    const cell = el("td", "text");
    if (mark && mark.line === line.number) {
      row.className = "cited";
      const chars = Array.from(line.text); // code points, like the span
      cell.append(chars.slice(0, mark.start).join(""));
      cell.append(el("mark", "span", chars.slice(mark.start, mark.end).join("")));
      cell.append(chars.slice(mark.end).join(""));
    } else {
      cell.textContent = line.text;
    }
    row.append(cell);
    table.append(row);
  }
  pane.append(table);
}

function renderImage(view, pane) {
  const figure = el("div", "figure");
  const img = el("img");
  img.alt = view.text || "";
  const box = el("div", "bbox");
  box.hidden = true;
  img.addEventListener("load", () => {
    const scale = img.clientWidth / img.naturalWidth;
    const [x0, y0, x1, y1] = view.bbox;
    box.style.left = x0 * scale - 2 + "px";
    box.style.top = y0 * scale - 2 + "px";
    box.style.width = (x1 - x0) * scale + 4 + "px";
    box.style.height = (y1 - y0) * scale + 4 + "px";
    box.hidden = false;
  });
  img.addEventListener("error", () => pane.append(el("p", "error", t("image_failed"))));
  img.src = withPrincipal(view.image_url);
  figure.append(img, box);
  pane.append(figure, el("p", "message", t("bbox", { bbox: JSON.stringify(view.bbox), text: view.text || "" })));
}

function renderViewer(view, cite, number) {
  const pane = $("#viewer");
  pane.replaceChildren();
  pane.dataset.evidenceId = view.evidence_id;
  pane.dataset.number = String(number);
  pane.append(el("h2", null, "[" + number + "] " + documentTitle(view)));
  const where = el("p", "viewer-where");
  where.append(el("span", "source", view.source));
  if (view.line) where.append(" · " + t("line", { line: view.line }));
  pane.append(where, verifiedLine(view));
  if (view.modality === "image") renderImage(view, pane);
  else renderFile(view, pane);
  pane.append(techDetails(view, cite));
  const marked = pane.querySelector("mark");
  if (marked) marked.scrollIntoView({ block: "center" });
}

function refreshViewerLabels() {
  const pane = $("#viewer");
  const id = pane.dataset.evidenceId;
  const number = Number(pane.dataset.number);
  const cite = current && current.result.citations[number - 1];
  if (!cite || cite.evidence_id !== id) return;
  evidenceView(id).then((view) => renderViewer(view, cite, number), () => {});
}

async function openCitation(cite, number) {
  document.querySelectorAll(".cite.active").forEach((b) => b.classList.remove("active"));
  document.querySelectorAll('.cite[data-evidence-id="' + CSS.escape(cite.evidence_id) + '"]').forEach((b) => b.classList.add("active"));
  hidePreview();
  const pane = $("#viewer");
  pane.hidden = false;
  $(".panes").classList.add("with-viewer");
  pane.replaceChildren(el("p", "message", t("loading")));
  const result = current && current.result;
  // Opened now, so re-verified now: a fresh view, not the one the card or preview used.
  current.views.delete(cite.evidence_id);
  try {
    const view = await evidenceView(cite.evidence_id);
    if (!current || current.result !== result) return; // a new question was asked meanwhile
    renderViewer(view, cite, number);
  } catch (error) {
    if (current && current.result === result) renderError(pane, error);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  let saved = null;
  try {
    saved = localStorage.getItem("rag_lab.lang");
  } catch (err) {
    saved = null;
  }
  lang = saved === "en" ? "en" : "zh";
  applyLanguage();
  $("#lang").addEventListener("click", () => setLanguage(lang === "zh" ? "en" : "zh"));
  $("#ask").addEventListener("submit", (event) => {
    event.preventDefault();
    submitQuestion();
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape") hidePreview();
  });
  $("#question").focus();
});

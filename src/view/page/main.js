// The view's shell: the header, the hash router, and live mode (server-sent events bump the version; pages reload their data).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ArmsPage } from "./arms.js";
import { CellPage } from "./cell.js";
import { html, parseHash, useJson } from "./common.js";
import { TaskPage } from "./task.js";
import { TasksPage } from "./tasks.js";

function useHash() {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return hash;
}

function useVersion() {
  const [version, setVersion] = useState(undefined);
  const [live, setLive] = useState(false);
  useEffect(() => {
    const events = new EventSource("/api/events");
    events.addEventListener("version", (event) => {
      setLive(true);
      setVersion(Number(event.data));
    });
    events.onerror = () => setLive(false);
    return () => events.close();
  }, []);
  return { version, live };
}

function App() {
  const hash = useHash();
  const { version, live } = useVersion();
  const run = useJson("/api/run", version);
  const route = parseHash(hash);
  useEffect(() => window.scrollTo(0, 0), [route.path.join("/")]);
  if (run.error) return html`<p class="error">Cannot read the run: ${run.error}</p>`;
  if (!run.data) return html`<p class="loading">loading…</p>`;
  const info = run.data;
  const labels = Object.fromEntries(info.failureKinds.map((entry) => [entry.kind, entry.label]));
  const context = { run: info, version, labels };
  const [page, ...rest] = route.path;
  let body;
  if (page === "tasks") body = html`<${TasksPage} key=${hash} ...${context} query=${route.query} />`;
  else if (page === "task") body = html`<${TaskPage} ...${context} taskId=${Number(rest[0])} query=${route.query} />`;
  else if (page === "cell") body = html`<${CellPage} ...${context} arm=${rest[0]} repeat=${Number(rest[1])} taskId=${Number(rest[2])} />`;
  else body = html`<${ArmsPage} ...${context} />`;
  const progress = info.expectedCells ? `${info.finishedCells} of ${info.expectedCells} cells` : `${info.finishedCells} cells`;
  return html`<div>
    <header>
      <a class="title" href="#/">${info.name}</a>
      <nav>
        <a href="#/" class=${!page ? "active" : ""}>Arms</a>
        <a href="#/tasks" class=${page === "tasks" || page === "task" ? "active" : ""}>Tasks</a>
        <a href="#/#failures">What failed</a>
      </nav>
      <span class="progress" data-testid="progress">${progress}</span>
      <span
        class=${`live ${live ? "on" : "off"}`}
        title=${live ? "following new cells" : "not following (the server stopped or live mode is off)"}
      >${live ? "● live" : "○"}</span>
    </header>
    ${info.tasksProblem ? html`<p class="warning">${info.tasksProblem}</p>` : ""}
    <main>${body}</main>
    <footer>read-only view of <code>${info.runDir}</code> · thumbnails cached in <code>${info.cacheDir}</code></footer>
  </div>`;
}

render(html`<${App} />`, document.getElementById("app"));

// Small custom elements: <aps-sparkline> (an SVG line of a series) and <aps-confirm> (the modal
// that confirms an action before it is sent).
const SVG = 'http://www.w3.org/2000/svg';

class Sparkline extends HTMLElement {
  set values(values) {
    this._values = values ?? [];
    this.render();
  }

  render() {
    const w = 160;
    const hgt = 36;
    const values = this._values ?? [];
    let points = values.map((v, i) => [i, v]).filter(([, v]) => typeof v === 'number');
    let n = Math.max(1, values.length - 1);
    // One sample so far: a flat line at its value.
    if (points.length === 1) {
      points = [
        [0, points[0][1]],
        [1, points[0][1]],
      ];
      n = 1;
    }
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', `0 0 ${w} ${hgt}`);
    svg.setAttribute('preserveAspectRatio', 'none');
    svg.setAttribute('class', 'spark');
    svg.setAttribute('role', 'img');
    const max = Math.max(1, ...points.map(([, v]) => v)) * 1.25; // headroom: a flat series is not the frame
    if (points.length > 0) {
      const xy = points.map(([i, v]) => `${((i / n) * (w - 2) + 1).toFixed(1)},${(hgt - 2 - (v / max) * (hgt - 6)).toFixed(1)}`);
      const area = document.createElementNS(SVG, 'polygon');
      area.setAttribute('points', `1,${hgt} ${xy.join(' ')} ${xy[xy.length - 1].split(',')[0]},${hgt}`);
      area.setAttribute('class', 'spark-area');
      const line = document.createElementNS(SVG, 'polyline');
      line.setAttribute('points', xy.join(' '));
      line.setAttribute('class', 'spark-line');
      svg.append(area, line);
    }
    const last = points.length ? points[points.length - 1][1] : null;
    svg.setAttribute('aria-label', `${this.getAttribute('label') ?? 'series'}: latest ${last ?? 'none'}`);
    this.replaceChildren(svg);
  }
}

class Confirm extends HTMLElement {
  /** Resolves true when the operator confirms `message`. */
  ask(title, message, verb = 'Confirm', danger = false) {
    const dialog = document.createElement('dialog');
    dialog.className = 'confirm';
    const h = document.createElement('h3');
    h.textContent = title;
    const p = document.createElement('p');
    p.textContent = message;
    const cancel = document.createElement('button');
    cancel.textContent = 'Back';
    cancel.className = 'btn';
    const ok = document.createElement('button');
    ok.textContent = verb;
    ok.className = danger ? 'btn btn-danger' : 'btn btn-primary';
    ok.dataset.confirm = '';
    const row = document.createElement('div');
    row.className = 'confirm-actions';
    row.append(cancel, ok);
    dialog.append(h, p, row);
    this.replaceChildren(dialog);
    dialog.showModal();
    return new Promise((resolve) => {
      const done = (v) => {
        dialog.close();
        dialog.remove();
        resolve(v);
      };
      cancel.addEventListener('click', () => done(false));
      ok.addEventListener('click', () => done(true));
      dialog.addEventListener('cancel', () => done(false));
    });
  }
}

customElements.define('aps-sparkline', Sparkline);
customElements.define('aps-confirm', Confirm);

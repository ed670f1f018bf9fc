// Building DOM without a framework: el('div', {className: 'x', on: {click}}, child, 'text').
// Every view builds its nodes through this one helper so that attributes, listeners and
// children are handled the same way everywhere.

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === 'on') for (const [type, fn] of Object.entries(value)) node.addEventListener(type, fn);
    else if (key === 'attrs') for (const [name, v] of Object.entries(value)) node.setAttribute(name, v);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key === 'style') Object.assign(node.style, value);
    else node[key] = value;
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : String(child));
  }
}

// SVG needs its own namespace; same calling convention as el, attributes set with setAttribute.
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [name, v] of Object.entries(attrs)) node.setAttribute(name, v);
  for (const child of children.flat(Infinity)) if (child) node.append(child);
  return node;
}

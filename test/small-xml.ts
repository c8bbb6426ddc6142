/**
 * A small XML reader for tests of what we write (the timeline's SVG): elements with their
 * attributes, text and children. It refuses what is not well formed (an unclosed or mismatched
 * tag, a bare `<` or `&`, text outside the root) rather than guess, so a test also proves that.
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (not its children's), entities decoded. */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const TOKEN = /<\?[^?]*\?>|<!--[\s\S]*?-->|<\/([\w:-]+)\s*>|<([\w:-]+)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|([^<]+)|</g;

export function parseXml(source: string): XmlElement {
  const root: XmlElement = { name: "#document", attributes: {}, children: [], text: "" };
  const stack = [root];
  for (const match of source.matchAll(TOKEN)) {
    const [token, close, open, attributes, selfClosing, text] = match;
    const parent = stack.at(-1)!;
    if (token.startsWith("<?") || token.startsWith("<!--")) continue;
    if (close !== undefined) {
      if (parent.name !== close) throw new Error(`</${close}> closes <${parent.name}> at offset ${match.index}`);
      stack.pop();
    } else if (open !== undefined) {
      const element: XmlElement = { name: open, attributes: attributeMap(attributes ?? ""), children: [], text: "" };
      parent.children.push(element);
      if (selfClosing !== "/") stack.push(element);
    } else if (text !== undefined) {
      if (parent === root) {
        if (text.trim() !== "") throw new Error(`text outside the root element at offset ${match.index}`);
        continue;
      }
      parent.text += decode(text, match.index!);
    } else throw new Error(`a bare "<" at offset ${match.index}`);
  }
  if (stack.length !== 1) throw new Error(`<${stack.at(-1)!.name}> is never closed`);
  if (root.children.length !== 1) throw new Error(`${root.children.length} root elements`);
  return root.children[0]!;
}

/** Every element under `element` (itself included), depth first. */
export function descendants(element: XmlElement): XmlElement[] {
  return [element, ...element.children.flatMap(descendants)];
}

function attributeMap(source: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const [, name, value] of source.matchAll(/([\w:-]+)="([^"]*)"/g)) attributes[name!] = decode(value!, 0);
  return attributes;
}

function decode(text: string, offset: number): string {
  return text.replace(/&([^;\s]*);?/g, (whole, name: string) => {
    const decoded = ENTITIES[name];
    if (decoded === undefined || !whole.endsWith(";")) throw new Error(`a bare "&" near offset ${offset}: ${whole}`);
    return decoded;
  });
}

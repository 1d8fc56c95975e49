/**
 * An untrusted stylesheet made safe to show: parsed by the browser's CSS parser (a
 * constructed sheet, which never fetches `@import`), every declaration that would fetch from
 * another host taken out (and kept, to be put back on a click), and the rest re-serialised
 * inside `@scope`, so that it styles the output and nothing of JupyterLab around it. A stray
 * `}` cannot escape the scope: the text is the parser's serialisation, never the original.
 */

import { cssAddresses, IRemoteResource, remoteOnly } from './remoteContent';

/** The rules of a parsed sheet (the browser's, or a test's parser). */
export type SheetParser = (css: string) => ArrayLike<CSSRule> | null;

/** A fetch held back from a stylesheet or a `style` attribute. */
export interface IHeldCss {
  /** What it would fetch. */
  resource: IRemoteResource;
  /** CSS that loads it when added to the page, already scoped; absent for `@import`. */
  css?: string;
}

/** A stylesheet as it may be shown. */
export interface IGatedSheet {
  /** The scoped text, free of remote fetches. */
  text: string;
  /** What was held back, in order. */
  held: IHeldCss[];
}

/** The browser's CSS parser, through a constructed sheet (null where it is missing). */
export function constructedSheet(css: string): ArrayLike<CSSRule> | null {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    return sheet.cssRules;
  } catch {
    return null;
  }
}

/** The remote fetches of a CSS text. */
export function remoteInCss(css: string): IRemoteResource[] {
  return remoteOnly(cssAddresses(css));
}

/** `@scope (selector) { css }`. */
export function scoped(selector: string, css: string): string {
  return `@scope (${selector}) {\n${css}\n}`;
}

// CSSRule.type values (the numbers are stable; newer rules are 0).
const IMPORT_RULE = 3;
const FONT_FACE_RULE = 5;
const PAGE_RULE = 6;
const KEYFRAMES_RULE = 7;
const NAMESPACE_RULE = 10;

interface IRuleLike {
  type: number;
  cssText: string;
  selectorText?: string;
  style?: CSSStyleDeclaration;
  cssRules?: ArrayLike<CSSRule>;
}

/**
 * Take the remote fetches out of `style`; each is held with the CSS (`wrap` of one
 * declaration) that puts it back.
 */
export function cleanDeclarations(
  style: CSSStyleDeclaration,
  wrap: (declaration: string) => string
): IHeldCss[] {
  const held: IHeldCss[] = [];
  const remove: string[] = [];
  for (let index = 0; index < style.length; index++) {
    const property = style[index];
    const value = style.getPropertyValue(property);
    const resources = remoteInCss(value);
    if (resources.length) {
      const important = style.getPropertyPriority(property)
        ? ' !important'
        : '';
      const css = wrap(`${property}: ${value}${important};`);
      held.push(...resources.map(resource => ({ resource, css })));
      remove.push(property);
    }
  }
  for (const property of remove) {
    style.removeProperty(property);
  }
  return held;
}

/**
 * `css` as it may be shown inside the element `scope` selects: remote `@import`s, fonts and
 * declarations held back, the rest scoped. `parse` is the browser's parser by default.
 */
export function gateStyleSheet(
  css: string,
  scope: string,
  parse: SheetParser = constructedSheet
): IGatedSheet {
  const held: IHeldCss[] = remoteOnly(
    cssAddresses(css).filter(found => found.kind === 'stylesheet')
  ).map(resource => ({ resource }));
  const global: string[] = [];
  const local: string[] = [];
  const walk = (
    rules: ArrayLike<CSSRule>,
    wrap: (inner: string) => string,
    into: string[] | null
  ) => {
    for (const rule of Array.from(rules) as unknown as IRuleLike[]) {
      if ([IMPORT_RULE, NAMESPACE_RULE, PAGE_RULE].includes(rule.type)) {
        continue;
      }
      if (rule.type === FONT_FACE_RULE || rule.type === KEYFRAMES_RULE) {
        const resources = remoteInCss(rule.cssText);
        held.push(
          ...resources.map(resource => ({ resource, css: rule.cssText }))
        );
        if (!resources.length && into) {
          global.push(rule.cssText);
        }
        continue;
      }
      const prelude =
        rule.selectorText ??
        rule.cssText.slice(0, rule.cssText.indexOf('{')).trim();
      if (rule.style) {
        const own = rule.selectorText
          ? (text: string) => wrap(`${rule.selectorText} { ${text} }`)
          : wrap;
        held.push(
          ...cleanDeclarations(rule.style, text => scoped(scope, own(text)))
        );
      }
      if (rule.cssRules) {
        walk(rule.cssRules, inner => wrap(`${prelude} { ${inner} }`), null);
      }
      // Whatever still fetches (a form the cleaning missed) goes with its rule.
      if (into && !remoteInCss(rule.cssText).length) {
        into.push(rule.cssText);
      }
    }
  };
  const rules = parse(css);
  if (rules) {
    walk(rules, text => text, local);
  }
  const text = [...global, local.length ? scoped(scope, local.join('\n')) : '']
    .filter(Boolean)
    .join('\n');
  return { text, held };
}

/**
 * Take the remote fetches out of an element's `style` attribute (held, with the declaration
 * that puts each back); the attribute goes whole when something fetching remains.
 */
export function gateStyleAttribute(element: Element): {
  resource: IRemoteResource;
  property: string;
  value: string;
  priority: string;
}[] {
  const text = element.getAttribute('style') ?? '';
  if (!remoteInCss(text).length) {
    return [];
  }
  const style = (element as HTMLElement).style;
  const held: {
    resource: IRemoteResource;
    property: string;
    value: string;
    priority: string;
  }[] = [];
  if (style) {
    const remove: string[] = [];
    for (let index = 0; index < style.length; index++) {
      const property = style[index];
      const value = style.getPropertyValue(property);
      const priority = style.getPropertyPriority(property);
      for (const resource of remoteInCss(value)) {
        held.push({ resource, property, value, priority });
      }
      if (remoteInCss(value).length) {
        remove.push(property);
      }
    }
    remove.forEach(property => style.removeProperty(property));
  }
  if (remoteInCss(element.getAttribute('style') ?? '').length) {
    element.removeAttribute('style');
  }
  return held;
}

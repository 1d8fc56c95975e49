/**
 * The two DOM builders the chat views share: a plain element and a labelled button.
 */

import { LabIcon } from '@jupyterlab/ui-components';

/** Create a `tag` element with a class, attributes and (optionally) its text. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  attributes: { [name: string]: string } = {},
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  for (const [name, value] of Object.entries(attributes)) {
    node.setAttribute(name, value);
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

/** Create a chat button with an accessible label, an optional icon and optional text. */
export function button(
  className: string,
  label: string,
  text: string,
  icon: LabIcon | null,
  title?: string
): HTMLButtonElement {
  const node = element('button', `jp-Chapyter-chatButton ${className}`, {
    type: 'button',
    'aria-label': label,
    title: title ?? label
  });
  if (icon) {
    node.appendChild(
      icon.element({
        tag: 'span',
        className: 'jp-Chapyter-chatButtonIcon',
        elementSize: 'small'
      })
    );
  }
  if (text) {
    node.appendChild(element('span', 'jp-Chapyter-chatButtonText', {}, text));
  }
  return node;
}

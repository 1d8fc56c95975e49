// Lints the extension's CSS (`npx stylelint "labextension/style/**/*.css"`): standard rules,
// relaxed for JupyterLab's naming, and no raw colours: every colour comes from a `--jp-*`
// variable so the extension follows the light, dark and high-contrast themes.
export default {
  extends: ['stylelint-config-standard'],
  rules: {
    // JupyterLab's class names: `jp-Chapyter-chatMessage`, `jp-mod-streaming`.
    'selector-class-pattern': [
      '^jp-[A-Za-z0-9]+(-[A-Za-z0-9]+)*$',
      { message: 'Use a jp-Chapyter-* class (or a jp-mod-* modifier)' }
    ],
    // JupyterLab's variables are `--jp-ui-font-size1`, `--jp-layout-color2`.
    'custom-property-pattern': null,
    // Flags a later, less specific selector for the same element, e.g. the code-block
    // buttons after `.jp-Chapyter-chatButton:hover`. Here the hover rule is meant to win over
    // each place's own background, and it does: specificity decides, not order.
    'no-descending-specificity': null,
    // No raw colours: hex, rgb()/hsl() and named colours are refused.
    'color-no-hex': true,
    'color-named': 'never',
    'function-disallowed-list': [
      'rgb',
      'rgba',
      'hsl',
      'hsla',
      'hwb',
      'lab',
      'lch',
      'oklab',
      'oklch',
      'color'
    ]
  }
};

/**
 * Which model the chat's messages go to: what the server offers, what the person picked and
 * the model remembered from last time. Plain state; `model.ts` signals the changes.
 */

import { IChatConfig, IModelInfo } from './tokens';

/** The models offered and the one selected. */
export class ModelChoice {
  /** Models the server offers, in configuration order. */
  models: readonly IModelInfo[] = [];
  /** Name of the model messages go to (null: the server's default). */
  selected: string | null = null;
  /** The model picked last time (a setting): selected whenever the server offers it. */
  preferred = '';

  /** Whether the server offers a model of this name. */
  offers(name: string | null): boolean {
    return !!name && this.models.some(m => m.name === name);
  }

  /** Select `name` (null: the default) if offered; whether the selection changed. */
  select(name: string | null): boolean {
    if (name === this.selected || (name !== null && !this.offers(name))) {
      return false;
    }
    this.selected = name;
    return true;
  }

  /** Remember the preference and select it if offered; whether the selection changed. */
  prefer(name: string): boolean {
    this.preferred = name;
    return !!name && name !== this.selected && this.select(name);
  }

  /** Take the server's models: the preference, else the current pick, else its default. */
  configure(config: IChatConfig): void {
    this.models = Array.isArray(config.models) ? config.models : [];
    const candidates = [this.preferred, this.selected, config.default];
    this.selected =
      candidates.find(name => this.offers(name)) ??
      this.models[0]?.name ??
      null;
  }

  /** The model info of a name (the selected one by default). */
  info(name: string | null = this.selected): IModelInfo | null {
    return this.models.find(m => m.name === name) ?? null;
  }
}

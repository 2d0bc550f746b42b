import type { VoiceInfo } from "../../engine/index.js";

/** The voices the configured TTS providers offer; agents' `voice_id` and `language` are checked here. */
export class VoiceCatalog {
  private readonly byId: Map<string, VoiceInfo>;

  constructor(voices: readonly VoiceInfo[]) {
    this.byId = new Map(voices.map((v) => [v.id, v]));
  }

  list(): VoiceInfo[] {
    return [...this.byId.values()];
  }

  get(id: string): VoiceInfo | undefined {
    return this.byId.get(id);
  }

  /** Languages at least one voice speaks. */
  languages(): string[] {
    return [...new Set(this.list().map((v) => v.language))].sort();
  }
}

// OpenManus's `[daytona]` table of config.toml: the remote sandbox service SandboxManus uses.
// Unlike OpenManus, a missing table is reported to whoever asks for Daytona, and to nobody else.
import { type ConfigError, err, type OpenManusConfig, ok, type Result } from '@openmanus/core';
import { z } from 'zod';

/** The Daytona provider's settings, named after OpenManus's `[daytona]` keys. */
export interface DaytonaSettings {
  readonly apiKey: string;
  /** The API's base URL (OpenManus's `daytona_server_url`). */
  readonly serverUrl: string;
  /** The region sandboxes are made in. */
  readonly target: string;
  readonly imageName: string;
  /** Started in the background when a sandbox is made (the image's desktop, browser and web server). */
  readonly entrypoint: string;
  /** The password of the sandbox's VNC desktop. */
  readonly vncPassword: string;
}

export const DEFAULT_DAYTONA_SETTINGS: Omit<DaytonaSettings, 'apiKey'> = {
  serverUrl: 'https://app.daytona.io/api',
  target: 'us',
  imageName: 'whitezxj/sandbox:0.1.0',
  entrypoint: '/usr/bin/supervisord -n -c /etc/supervisor/conf.d/supervisord.conf',
  vncPassword: '123456',
};

const text = z.string().trim().min(1, { error: 'must be a non-empty string' });

const daytonaSection = z
  .object({
    daytona_api_key: z.string({ error: 'is required (the API key of your Daytona account)' }).trim().min(1, {
      error: 'is required (the API key of your Daytona account)',
    }),
    daytona_server_url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as "https://app.daytona.io/api"' })
      .optional(),
    daytona_target: text.optional(),
    sandbox_image_name: text.optional(),
    sandbox_entrypoint: text.optional(),
    VNC_password: text.optional(),
  })
  .strict();

/**
 * `[daytona]` of a loaded config, with OpenManus's defaults. No table is an error saying Daytona
 * is not configured; a bad key is named in the error.
 */
export function daytonaSettingsFrom(config: OpenManusConfig): Result<DaytonaSettings, ConfigError> {
  const where = config.file ? { file: config.file } : {};
  const section = config.sections.daytona;
  if (section === undefined) {
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: '[daytona]',
      message: 'Daytona is not configured: add a [daytona] table with daytona_api_key to use the daytona sandbox',
    });
  }
  const parsed = daytonaSection.safeParse(section);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    if (issue?.code === 'unrecognized_keys') {
      return err({
        code: 'CONFIG_INVALID',
        ...where,
        key: '[daytona]',
        message: `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`,
      });
    }
    const path = issue?.path.join('.');
    return err({
      code: 'CONFIG_INVALID',
      ...where,
      key: path ? `[daytona].${path}` : '[daytona]',
      message: issue?.message ?? 'invalid',
    });
  }
  const given = parsed.data;
  const defaults = DEFAULT_DAYTONA_SETTINGS;
  return ok({
    apiKey: given.daytona_api_key,
    serverUrl: given.daytona_server_url ?? defaults.serverUrl,
    target: given.daytona_target ?? defaults.target,
    imageName: given.sandbox_image_name ?? defaults.imageName,
    entrypoint: given.sandbox_entrypoint ?? defaults.entrypoint,
    vncPassword: given.VNC_password ?? defaults.vncPassword,
  });
}

import { startGateway, type RunningGateway } from '../../../test/helpers/start-gateway.js';

/**
 * A real gw on an ephemeral port, with the client's environment (GW_API_KEY, GW_BASE_URL) pointing
 * at it, so `new Gw()` is configured as a user's program would be.
 */
export async function startGatewayForClient(): Promise<RunningGateway> {
  const running = await startGateway();
  process.env['GW_API_KEY'] = running.apiKey;
  process.env['GW_BASE_URL'] = running.baseURL;
  return running;
}

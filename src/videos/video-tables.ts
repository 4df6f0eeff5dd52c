export interface VideosTable {
  id: string;
  org_id: string;
  key_id: string;
  model: string;
  deployment_id: string;
  provider: string;
  upstream_job_id: string;
  status: string;
  progress: number;
  prompt: string;
  seconds: number;
  size: string;
  error: string | null;
  created_at: number;
  completed_at: number | null;
  updated_at: number;
}

export interface VideoTables {
  videos: VideosTable;
}

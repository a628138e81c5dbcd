//! augbench-cloud: cloud runs (GCP) — job payload, VM startup script, dataset staging and result
//! collection. Not built yet: configs with a `cloud:` section validate and plan, and `run` refuses
//! them with a clear message. The config types live in augbench-core (`config::CloudConfig`).

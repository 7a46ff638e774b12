//! The optional approval webhook: a JSON POST to `serve.webhook_url` for
//! each pending approval. A failure is logged and changes nothing: the
//! approval stays pending and is listed by `bashgate pending`.

use std::time::Duration;

use serde_json::Value;

#[derive(Clone)]
pub struct Webhook {
    url: String,
    client: reqwest::Client,
}

impl Webhook {
    pub fn new(url: &str, timeout: Duration) -> Result<Webhook, String> {
        let client = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| format!("cannot build the webhook client: {e}"))?;
        Ok(Webhook {
            url: url.to_string(),
            client,
        })
    }

    pub async fn post(&self, body: Value) {
        let id = body["id"].as_str().unwrap_or("?").to_string();
        match self.client.post(&self.url).json(&body).send().await {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => eprintln!(
                "bashgate serve: the webhook {} answered {} for approval {id}",
                self.url,
                r.status()
            ),
            Err(e) => eprintln!(
                "bashgate serve: the webhook {} failed for approval {id}: {e}",
                self.url
            ),
        }
    }
}

"""The few calls of Label Studio's REST API the backend makes, with one clear error for each way they fail.

Authentication: a legacy API token (``Authorization: Token KEY``, Account & Settings -> Legacy Token) or a
personal access token (a JWT refresh token: exchanged at ``/api/token/refresh`` for an access token, sent as
``Authorization: Bearer ...``). Calls: the project (its label config), its JSON export (tasks with their
annotations: the format :mod:`eer_plugin.corpus.importers.label_studio` reads), its predictions, and creating
and deleting predictions.
"""

from typing import Any, Dict, List, Optional

from eer_plugin.common.errors import UserError

#: seconds to wait for Label Studio (connect, read); an export of a large project takes a while
TIMEOUT = (5.0, 300.0)


class LabelStudioError(UserError):
    """Label Studio cannot be reached, refuses the API key, or answers with an error."""


class LabelStudioClient:
    """Label Studio at ``url`` (``http://localhost:8080``) with ``api_key`` (see the module docstring)."""

    def __init__(self, url: str, api_key: str) -> None:
        import requests

        if not url:
            raise LabelStudioError("no Label Studio URL: pass --label-studio-url (e.g. http://localhost:8080)")
        if not api_key:
            raise LabelStudioError(
                "no Label Studio API key: pass --api-key or set LABEL_STUDIO_API_KEY (Label Studio: Account & Settings)"
            )
        self.url = url.rstrip("/")
        self._key = api_key
        self._session = requests.Session()
        self._authorization: Optional[str] = None

    # ------------------------------------------------------------------ plumbing
    def _auth_header(self) -> str:
        if self._authorization is None:
            if self._key.count(".") == 2:  # a personal access token (JWT refresh token)
                answer = self._send("POST", "/api/token/refresh", {"refresh": self._key}, authorized=False)
                self._authorization = f"Bearer {answer['access']}"
            else:
                self._authorization = f"Token {self._key}"
        return self._authorization

    def _send(
        self, method: str, path: str, body: Any = None, params: Optional[Dict[str, Any]] = None, authorized: bool = True
    ) -> Any:
        import requests

        headers = {"Authorization": self._auth_header()} if authorized else {}
        try:
            response = self._session.request(
                method, self.url + path, json=body, params=params, headers=headers, timeout=TIMEOUT
            )
        except requests.exceptions.RequestException as error:
            raise LabelStudioError(
                f"Label Studio at {self.url} is unreachable ({type(error).__name__}); start it, or fix --label-studio-url"
            ) from None
        if response.status_code in (401, 403):
            raise LabelStudioError(
                f"Label Studio at {self.url} refused the API key (HTTP {response.status_code} on {path}): check --api-key / "
                "LABEL_STUDIO_API_KEY (a legacy token needs legacy tokens enabled in the organization; or use a "
                "personal access token)"
            )
        if response.status_code == 404:
            raise LabelStudioError(f"Label Studio at {self.url}: {path} not found (HTTP 404): is the project id right?")
        if response.status_code >= 400:
            raise LabelStudioError(
                f"Label Studio at {self.url}: {method} {path} failed with HTTP {response.status_code}: {response.text[:200]}"
            )
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise LabelStudioError(
                f"{self.url}{path} answered no JSON (HTTP {response.status_code}): is --label-studio-url Label Studio?"
            ) from None

    # ------------------------------------------------------------------ calls
    def project(self, project: int) -> Dict[str, Any]:
        """The project (``id``, ``title``, ``label_config``, ...)."""
        return self._send("GET", f"/api/projects/{int(project)}")

    def export(self, project: int, all_tasks: bool = False) -> List[Dict[str, Any]]:
        """The project's JSON export: the annotated tasks with their annotations (every task with ``all_tasks``)."""
        params = {"exportType": "JSON", "download_all_tasks": "true" if all_tasks else "false"}
        tasks = self._send("GET", f"/api/projects/{int(project)}/export", params=params)
        if not isinstance(tasks, list):
            raise LabelStudioError(f"Label Studio at {self.url}: the export of project {project} is no list of tasks")
        return tasks

    def predictions(self, project: int) -> List[Dict[str, Any]]:
        """Every prediction of the project (``id``, ``task``, ``model_version``, ``score``, ...)."""
        found = self._send("GET", "/api/predictions/", params={"project": int(project)})
        return found if isinstance(found, list) else found.get("results", [])

    def create_prediction(self, task: int, prediction: Dict[str, Any]) -> Dict[str, Any]:
        return self._send("POST", "/api/predictions/", dict(prediction, task=int(task)))

    def delete_prediction(self, prediction: int) -> None:
        self._send("DELETE", f"/api/predictions/{int(prediction)}/")

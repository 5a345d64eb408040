import json
import logging
import re

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]*$")
MAX_NAME = 64

from app import store

log = logging.getLogger(__name__)


def handle_create(request):
    payload = json.loads(request.body)
    if "name" not in payload:
        return {"status": 400, "error": "name is required"}
    record = store.create(payload)
    log.info("created %s", record.id)
    return {"status": 201, "body": record.to_dict()}


def handle_get(request, record_id):
    record = store.get(record_id)
    if record is None:
        return {"status": 404, "error": "not found"}
    log.info("fetched %s", record_id)
    return {"status": 200, "body": record.to_dict()}


def handle_list(request):
    records = store.all()
    log.info("listed %d records", len(records))
    return {"status": 200, "body": [r.to_dict() for r in records]}


def handle_update(request, record_id):
    payload = json.loads(request.body)
    if "name" not in payload:
        return {"status": 400, "error": "name is required"}
    if len(payload["name"]) > MAX_NAME:
        return {"status": 400, "error": "name is too long"}
    record = store.update(record_id, payload)
    log.info("updated %s", record_id)
    return {"status": 200, "body": record.to_dict()}

import logging
